# Regenerate the checked-in C of the bundled robots (tests fail when it is stale).
EXAMPLES := puma560 panda ur5

generated:
	for r in $(EXAMPLES); do soagen generate --example $$r --out generated/$$r --quiet || exit 1; done

.PHONY: generated
