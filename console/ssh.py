"""The SSH layer under the name the foundation issue gave it; it lives in console/remote/ssh.py,
beside the rest of the code that does I/O on hosts."""

from console.remote.ssh import Fleet, RemoteStream, SshHost

__all__ = ["Fleet", "RemoteStream", "SshHost"]
