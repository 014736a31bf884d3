#!/usr/bin/env bash
# The main job: list the plugins and devices found, then import and run the
# real TensorFlow graphs in tests/data/tf_graphs on the best device present,
# checking each output against its expected values; then the training
# examples.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bash "$root/.ci/setup.sh"
build=${PX_BUILD_DIR:-$root/build}
"$build/bin/plexus" devices
echo
"$build/bin/plexus_run_tf_graphs" "$root/tests/data/tf_graphs"
echo
# Train a small CNN on scikit-learn's digits with the Python API: checkpoint,
# SavedModel, reload and serve (fails below 97% test accuracy).
PYTHONPATH="$build/python" "$build/venv/bin/python" "$root/examples/train_digits.py" --out "$build/digits"
echo
# A Keras-style CNN (plexus.keras) on the digits fed by a plexus.data
# pipeline from TFRecord files the example writes, with callbacks; saved as
# .keras and as a SavedModel and both reloaded (fails below 95% accuracy).
PYTHONPATH="$build/python" "$build/venv/bin/python" "$root/examples/train_keras_digits.py" --out "$build/keras_digits"
echo
# The same CNN trained data-parallel on two processes (plexus-run hosts the
# store; collectives on Gloo over 127.0.0.1); fails below 95% test accuracy
# or when the ranks' weights differ.
PYTHONPATH="$build/python" "$build/venv/bin/python" -m plexus.distribute.run --nproc 2 \
    "$root/examples/train_digits_distributed.py" --out "$build/digits_dp"
echo
# Serve the digits SavedModel with plexus-serve on 127.0.0.1 and query it
# over TensorFlow Serving's and KServe's REST APIs; a second version is
# swapped in live; SIGTERM must end it with 0.
PYTHONPATH="$build/python" "$build/venv/bin/python" "$root/examples/serve_digits.py" \
    --saved-model "$build/digits/saved_model" --server "$build/bin/plexus-serve" --work "$build/digits_serving"
