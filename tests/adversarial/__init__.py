"""Standing adversarial suites: tables of attacks run end to end against real ctx.

Each module is one class of attack (secret reads, ...). A case names the call an agent makes
and what ctx must do with it; the suite checks the outcome in the user's world (real files,
real daemon, real commands), not ctx's answer alone. Add cases to a module's table; add a
module for a new class.
"""
