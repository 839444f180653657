"""The Docker Action's entry point: everything lives in cce_relevance.action.main."""

from cce_relevance.action.main import main

raise SystemExit(main())
