"""`upgrade HOST:PORT --to VERSION`: a proven profile carried to another SGLang release. `install`
says where VERSION lives and the host commands that put it there; the translation itself is
sglconsole.config.upgrade (offline, from the shipped tables)."""
