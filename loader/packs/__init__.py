"""Packs: tested mapping files for public standards, with a sample and its licence notice, laid out
as the project they are copied into by `loader init --pack NAME` (`loader.files.package_data`).
Data only; each pack has a page under docs/packs/ and a test under tests/packs/."""
