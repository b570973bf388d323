"""``python -m starweave``: the ``starweave`` command."""

from starweave.entry import main

if __name__ == "__main__":
    main()
