"""The bottom layer: the tape's layout and recording, which every other layer builds on."""
