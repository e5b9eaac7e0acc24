#!/bin/sh
# The image's entrypoint: each TABLIER_<NAME>_FILE (and PGPASSWORD_FILE) in the environment
# names a file (a compose or Kubernetes secret) whose content becomes TABLIER_<NAME> (PGPASSWORD),
# trailing newlines removed; then `tablier` runs with the arguments given (default: serve).
set -eu
for name in $(env | sed -n 's/^\(TABLIER_[A-Z0-9_]*\)_FILE=.*/\1/p; s/^\(PGPASSWORD\)_FILE=.*/\1/p'); do
    eval "file=\${${name}_FILE}"
    if [ ! -r "$file" ]; then
        echo "tablier: error: ${name}_FILE names $file, which cannot be read" >&2
        exit 2
    fi
    value=$(cat "$file")
    export "$name=$value"
    unset "${name}_FILE"
done
exec tablier "$@"
