"""Screens: the main console, confirmations, help, and small prompts."""
