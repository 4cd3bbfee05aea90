"""The SSH layer under the name the foundation issue gave it; it lives in sglconsole/remote/ssh.py,
beside the rest of the code that does I/O on hosts."""

from sglconsole.remote.ssh import Fleet, RemoteStream, SshHost

__all__ = ["Fleet", "RemoteStream", "SshHost"]
