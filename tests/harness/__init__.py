"""Tests of reflex/harness: codecs, the shim fallback, install, and the daemon path per harness."""
