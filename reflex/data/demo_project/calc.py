"""A small statistics module with one bug, for ctx's demo session."""


def add(a, b):
    return a + b


def mean(values):
    # Bug: integer division truncates the mean.
    return sum(values) // len(values)


def median(values):
    ordered = sorted(values)
    mid = len(ordered) // 2
    if len(ordered) % 2:
        return ordered[mid]
    return (ordered[mid - 1] + ordered[mid]) / 2


def clamp(x, low, high):
    return max(low, min(x, high))


def percent(part, whole):
    return round(100.0 * part / whole, 1)
