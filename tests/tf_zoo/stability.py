"""Marks the zoo models whose TensorFlow outputs are unstable (see
export.instability): for models written before the generator checked, or
written elsewhere. Reloads each model's SavedModel in TensorFlow, runs it on
inputs changed by random noise of export.PERTURBATION (relative) and, when its outputs move
beyond the model's tolerance, records "unstable" in its meta.json (and drops
the record when they do not).

    python tests/tf_zoo/stability.py --zoo DIR [--only REGEX]
"""
import argparse
import json
import os
import re
import sys
from pathlib import Path

os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from export import UNSTABLE_NOTE, instability, write_meta  # noqa: E402


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--zoo", required=True, help="the zoo folder (holding <set>/<name>/meta.json)")
    parser.add_argument("--only", help="only the models whose set/name matches this regular expression")
    args = parser.parse_args(argv)
    for meta_file in sorted(Path(args.zoo).glob("*/*/meta.json")):
        meta = json.loads(meta_file.read_text())
        model_id = f"{meta['set']}/{meta['name']}"
        if args.only and not re.search(args.only, model_id):
            continue
        folder = meta_file.parent
        if "saved_model" not in meta.get("exports", {}) or "tolerance" not in meta or not meta["outputs"]:
            continue
        inputs = {i["key"]: np.load(folder / i["file"]) for i in meta["inputs"]}
        reference = {o["key"]: np.load(folder / o["file"]) for o in meta["outputs"]}
        loaded = tf.saved_model.load(str(folder / meta["exports"]["saved_model"]))
        unstable = instability(loaded.signatures[meta["signatures"].get("saved_model", "serving_default")],
                               inputs, reference, meta["tolerance"])
        notes = [n for n in meta.get("notes", []) if not n.startswith("TensorFlow's own outputs change")]
        meta.pop("unstable", None)
        if unstable:
            meta["unstable"] = unstable
            notes.append(UNSTABLE_NOTE.format(**unstable))
        meta["notes"] = notes
        write_meta(str(folder), meta)
        print(f"{model_id}: {'UNSTABLE, ' + repr(unstable) if unstable else 'stable'}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
