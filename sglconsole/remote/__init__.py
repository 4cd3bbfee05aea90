"""What reads and acts on the hosts: SSH (ssh/), the feeds, the monitor."""

from sglconsole.remote.ssh import libraries

libraries.install()  # before any module here imports asyncssh: its look-ups spawn no ldconfig
