"""Tests of reflex.analysis (the compile, the team dataset, stats)."""
