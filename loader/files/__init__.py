"""Files: what the loader reads from the user (inputs, fingerprints), writes for the user (outputs,
private files) and ships inside the package (package_data)."""
