"""The standing adversarial suite: one module per class of attack or failure, each a table
of cases that is easy to extend (add a row, not a test)."""
