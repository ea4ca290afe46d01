"""The provider's side: wire types, cache models and observations. Knows nothing of kernels."""
