"""`python -m sitegen.cli`: the same as the `sitegen` command."""

from sitegen.cli.app import main

main()
