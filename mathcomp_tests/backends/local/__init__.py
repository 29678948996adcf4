"""Backends that run the model in this process (transformers, the sympy reference), and what they read
from a model folder: its tokenizer's decisions. A folder's weights (weights.py) and the folders the
project prepares (prepared.py) are checked and found at the package's root, below every room."""
