"""Movement ops: views, reshapes, concatenation, gathers and scatters."""
