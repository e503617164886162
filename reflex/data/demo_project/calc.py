"""A tiny module with a bug, for ctx's demo session."""


def add(a, b):
    return a + b


def mean(values):
    # Bug: integer division truncates the mean.
    return sum(values) // len(values)


def clamp(x, low, high):
    return max(low, min(x, high))
