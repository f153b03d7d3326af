"""``python -m arena.human``: the human seat process (see ``arena.human.seat``)."""

import sys

from arena.human.seat import main

sys.exit(main())
