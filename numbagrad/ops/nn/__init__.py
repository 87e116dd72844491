"""The neural-network ops behind torch.nn.functional: convolutions, pooling, padding,
interpolation, normalization, losses, attention and activations."""
