"""`upgrade HOST:PORT --to VERSION` as it runs: install, canary, A/B bench, verdict. It sits over
the bench (its A/B numbers) and the actions (install, restore, rollback, promote); the offline
translation is sglconsole.config.upgrade, the host-changing pieces sglconsole.actions.upgrade."""
