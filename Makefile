# Regenerate the checked-in C of the bundled robots (tests fail when it is stale).
EXAMPLES := puma560 panda ur5

generated:
	for r in $(EXAMPLES); do soagen generate --example $$r --variants --out generated/$$r --quiet || exit 1; done

# Flash and stack per function on Cortex-M (needs gcc-arm-none-eabi); tests check these files are current.
footprint:
	for r in puma560 panda; do soagen footprint --example $$r --markdown generated/$$r/footprint.md > /dev/null || exit 1; done

.PHONY: generated footprint
