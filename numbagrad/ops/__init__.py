"""The ops, by family: each family's records (defop), front ends, kernels and rules.
kernels.py and replay_kernels.py hold the structured ops' backward and forward kernels;
vjp.py their differentiable derivatives (create_graph)."""
