"""Standing adversarial suites: tables of cases, one module per class of attack or failure.

Each module is meant to be extended with new rows when a new case of its class is found;
the harness around the rows does not change.
"""
