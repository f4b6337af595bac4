import sys

from dpaudit.cli import main

if __name__ == "__main__":
    sys.exit(main())
