"""Allow ``python -m cce_relevance``."""

from cce_relevance.cli import main

if __name__ == "__main__":
    main()
