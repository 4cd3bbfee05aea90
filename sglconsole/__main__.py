from sglconsole.cli import main

raise SystemExit(main())
