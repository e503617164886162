"""The standing adversarial suite: one module per class of issue 16, each a table of cases."""
