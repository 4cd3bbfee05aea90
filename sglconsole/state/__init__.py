"""Fleet state: what the console knows now, and the rules that derive a server's status."""
