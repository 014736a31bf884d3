"""The applications set: every architecture in keras.applications, random
weights (weights=None), classes=10, batch 1, at the smallest square input
in 32..96 that the constructor accepts, through an Input named "image" (the
signature key in both SavedModels). The smallest member of each family
comes first so that a partial run still holds every family.

These models are large (up to a few GB each with all exports); they are
generated outside the repository (see README.md), not committed.
"""
import inspect
import zlib

import keras
import numpy as np

from export import Built, Case

SIZES = (32, 40, 48, 56, 64, 71, 72, 75, 76, 80, 88, 96)
# The smallest member of each family, generated first.
SMALLEST = ["MobileNetV3Small", "MobileNet", "MobileNetV2", "EfficientNetB0", "EfficientNetV2B0",
            "NASNetMobile", "DenseNet121", "ResNet50", "ResNet50V2", "ConvNeXtTiny", "Xception",
            "InceptionV3", "InceptionResNetV2", "VGG16"]
# The largest, generated last.
LARGEST = ["ResNet152V2", "ResNet152", "EfficientNetB6", "EfficientNetV2M", "ConvNeXtBase", "NASNetLarge",
           "EfficientNetB7", "EfficientNetV2L", "ConvNeXtLarge", "ConvNeXtXLarge"]
# Models whose graph starts with their own preprocessing (Rescaling,
# Normalization): they take pixels in [0, 255]; the others [-1, 1].
PIXEL_INPUT = ("EfficientNet", "ConvNeXt", "MobileNetV3")


def architectures():
    names = [n for n in dir(keras.applications)
             if n[0].isupper() and inspect.isfunction(getattr(keras.applications, n))]
    first = [n for n in SMALLEST if n in names]
    last = [n for n in LARGEST if n in names]
    middle = [n for n in names if n not in first and n not in last]
    return first + middle + last


def construct(name: str):
    """Builds the model at the smallest accepted size; returns (model, size)."""
    constructor = getattr(keras.applications, name)
    problems = []
    for size in SIZES:
        try:
            image = keras.Input((size, size, 3), name="image")
            model = constructor(weights=None, classes=10, input_shape=(size, size, 3), input_tensor=image)
            return model, size
        except ValueError as exc:
            problems.append(f"{size}: {exc}")
    raise ValueError(f"{name} accepts no size in {SIZES[0]}..{SIZES[-1]}: " + " | ".join(problems[-2:]))


def make_case(name: str) -> Case:
    def build() -> Built:
        model, size = construct(name)
        rng = np.random.default_rng(zlib.crc32(name.encode()))
        if name.startswith(PIXEL_INPUT):
            image = rng.uniform(0, 255, (1, size, size, 3)).astype("float32")
            values = "pixels uniform in [0, 255] (the model rescales itself)"
        else:
            image = rng.uniform(-1, 1, (1, size, size, 3)).astype("float32")
            values = "values uniform in [-1, 1] (preprocessed range)"
        key = model.inputs[0].name.split(":")[0]
        notes = [f"input size {size}x{size}x3, the smallest in {SIZES[0]}..{SIZES[-1]} the constructor accepts; "
                 f"{values}; {model.count_params()} parameters"]
        return Built(obj=model, inputs={key: image}, keras_model=model, notes=notes)

    return Case(name=name, kind="keras", build=build,
                description=f"keras.applications.{name}(weights=None, classes=10), batch 1, smallest input",
                tolerance={"rtol": 1e-3, "atol": 1e-5})


def cases():
    return [make_case(name) for name in architectures()]
