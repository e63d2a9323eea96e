"""The neutral transcript model and the loaders that produce it."""
