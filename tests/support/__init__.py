"""Helpers shared by the tests and the evals: the real-CLI harness, scripted model servers,
corpus and label loaders, simulated developers.

Imports reflex and the standard library (and test-only packages such as hypothesis); never a
test module and never evals/, so both sides can use it.
"""
