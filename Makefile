# Regenerate the checked-in C of the bundled robots (tests fail when it is stale).
EXAMPLES := puma560 panda ur5

generated:
	for r in $(EXAMPLES); do soagen generate --example $$r --variants --out generated/$$r --quiet || exit 1; done
	python -m soagen.reports.opcount .   # docs/guide/speed.md's op-count table, from generated/*/opcounts.json

# Flash and stack per function on Cortex-M (needs gcc-arm-none-eabi); tests check these files are current.
# The Panda's page also has the dynamics' derivatives (Cortex-M4F -Os).
footprint:
	soagen footprint --example puma560 --markdown generated/puma560/footprint.md > /dev/null
	soagen footprint --example panda --derivatives --markdown generated/panda/footprint.md > /dev/null
	soagen footprint "$$(python -c 'import soagen; print(soagen.robots.path("solo12"))')" --floating-base \
	    --point-tip FL_FOOT --point-tip FR_FOOT --point-tip HL_FOOT --point-tip HR_FOOT \
	    --function contact_dynamics --function impulse_dynamics --name solo12 --markdown docs/footprint_solo12.md > /dev/null

# Op counts against n for every variant (54 min wall, 19 min CPU on a shared, loaded 2-core machine) and the
# PUMA literature page (CasADi counts are re-measured by `python benchmarks/casadi_opcounts.py`, which builds
# its venv). The plot's peers panel reads docs/peer_opcounts.json (make peers).
scaling:
	soagen opcount --scaling 2..48 --plot docs/scaling.png --markdown docs/scaling.md --json docs/scaling.json > /dev/null

literature:
	python benchmarks/casadi_opcounts.py --table > /dev/null

# SymPyBotics and OpenSYMORO run from git checkouts named by SOAGEN_SYMPYBOTICS and SOAGEN_SYMORO
# (repositories and commits: benchmarks/peer_opcounts.py), and CasADi-on-Pinocchio (its venv built once),
# counted by soagen's rule (16 min on a shared 2-core machine)
peers:
	python benchmarks/peer_opcounts.py

.PHONY: generated footprint scaling literature peers

# Every op-count table of docs/ and the guide, in one command (about 75 min on a shared 2-core machine):
# speed.md's and generated/*/opcounts.md (generated), docs/peer_opcounts.* (peers, read by the next two),
# docs/scaling.* (scaling), docs/opcounts.md (literature), docs/parameter_opcounts.md (parameter_opcounts)
opcounts: generated peers scaling literature parameter_opcounts

parameter_opcounts:
	soagen opcount --peers docs/parameter_opcounts.md > /dev/null

.PHONY: opcounts parameter_opcounts

# Identification pages: base parameters of the bundled robots, op counts with the parameters as
# inputs beside SymPyBotics / OpenSYMORO, the identification example's output and figure
identification:
	soagen parameters --all --markdown docs/base_parameters.md > /dev/null
	$(MAKE) parameter_opcounts
	python examples/identify_panda.py --plot docs/identify_panda.png > docs/identify_panda.txt

.PHONY: identification

# The examples' figures in docs/ (needs pip install '.[examples]'; the examples draw into the
# current directory unless given a path)
figures:
	python examples/osc_panda.py --plot docs/osc_panda.png > /dev/null
	python examples/closed_chain_bar.py --plot docs/closed_chain_bar.png > /dev/null
	python examples/mpc_panda.py --plot docs/mpc_panda.png > /dev/null
	python examples/quadruped_balance.py --plot docs/quadruped_balance.png > /dev/null
	python examples/identify_panda.py --plot docs/identify_panda.png > docs/identify_panda.txt

.PHONY: figures
