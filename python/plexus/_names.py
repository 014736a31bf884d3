"""Public snake_case names of the registry's ops.

NAMES maps a TensorFlow op name to the public names it gets, each written as
"namespace.name" ("name" alone for the top-level `plexus` namespace). The
names are the ones a TensorFlow user would guess (tf.*, tf.math.*, tf.nn.*,
tf.linalg.*, tf.io.*, tf.strings.*), plus NumPy spellings at the top level
where they are obvious (`plexus.power`, `plexus.negative`, ...). Superseded
versions of an op (Add, Concat, Select, ...) live in `plexus.v1`, like
tf.compat.v1; resource, variable and TensorArray ops, which TensorFlow only
exposes through tf.raw_ops, get their snake_case op name in `plexus.state`,
`plexus.tensor_array`, `plexus.train`.

A name whose friendly signature differs from the op (reduce_sum(x, axis,
keepdims), concat(values, axis), ...) is overridden by the hand-written
function of the same name in _api.py; the others are generated from the op
definition and take the op's inputs and attributes directly.

GRAPH_ONLY lists the ops that get no public name, each with the reason: they
stay reachable through `plexus.raw_ops` only. The test suite checks that every
registered op is in exactly one of the two tables.
"""

# Namespaces (modules of the package) that names may use; "" is `plexus`.
NAMESPACES = ("", "math", "nn", "linalg", "audio", "io", "strings", "state",
              "tensor_array", "train", "v1")

NAMES = {
    "Abs": ["abs", "math.abs"],
    "Add": ["v1.add"],
    "AddV2": ["add", "math.add"],
    "All": ["reduce_all", "math.reduce_all"],
    "Any": ["reduce_any", "math.reduce_any"],
    "ApplyGradientDescent": ["train.apply_gradient_descent"],
    "ArgMax": ["argmax", "math.argmax"],
    "ArgMin": ["argmin", "math.argmin"],
    "Assign": ["state.assign"],
    "AssignAdd": ["state.assign_add"],
    "AssignAddVariableOp": ["state.assign_add_variable_op"],
    "AssignSub": ["state.assign_sub"],
    "AssignSubVariableOp": ["state.assign_sub_variable_op"],
    "AssignVariableOp": ["state.assign_variable_op"],
    "AudioSpectrogram": ["audio.audio_spectrogram"],
    "AvgPool": ["nn.avg_pool2d", "nn.avg_pool"],
    "BatchMatMul": ["v1.batch_matmul"],
    "BatchMatMulV2": ["linalg.batch_matmul"],
    "BatchMatMulV3": ["linalg.batch_matmul_v3"],
    "BatchToSpaceND": ["batch_to_space", "batch_to_space_nd"],
    "BiasAdd": ["nn.bias_add"],
    "BroadcastTo": ["broadcast_to"],
    "Cast": ["cast"],
    "Ceil": ["ceil", "math.ceil"],
    "Concat": ["v1.concat"],
    "ConcatV2": ["concat"],
    "Conv2D": ["nn.conv2d"],
    "DecodeWav": ["audio.decode_wav"],
    "DepthwiseConv2dNative": ["nn.depthwise_conv2d_native", "nn.depthwise_conv2d"],
    "DestroyResourceOp": ["state.destroy_resource_op"],
    "DisableCopyOnRead": ["state.disable_copy_on_read"],
    "Div": ["v1.div"],
    "Einsum": ["einsum", "linalg.einsum"],
    "Elu": ["nn.elu"],
    "Equal": ["equal", "math.equal"],
    "Erf": ["math.erf"],
    "Exp": ["exp", "math.exp"],
    "ExpandDims": ["expand_dims"],
    "Fill": ["fill"],
    "Floor": ["floor", "math.floor"],
    "FloorDiv": ["floordiv", "math.floordiv", "floor_divide"],
    "FloorMod": ["floormod", "math.floormod", "mod", "math.mod"],
    "FusedBatchNorm": ["v1.fused_batch_norm"],
    "FusedBatchNormV2": ["v1.fused_batch_norm_v2"],
    "FusedBatchNormV3": ["nn.fused_batch_norm"],
    "Gather": ["v1.gather"],
    "GatherNd": ["gather_nd"],
    "GatherV2": ["gather"],
    "Gelu": ["nn.gelu"],
    "Greater": ["greater", "math.greater"],
    "GreaterEqual": ["greater_equal", "math.greater_equal"],
    "Identity": ["identity"],
    "IdentityN": ["identity_n"],
    "Inv": ["v1.inv"],
    "IsVariableInitialized": ["state.is_variable_initialized"],
    "LeakyRelu": ["nn.leaky_relu"],
    "Less": ["less", "math.less"],
    "LessEqual": ["less_equal", "math.less_equal"],
    "Log": ["log", "math.log"],
    "Log1p": ["log1p", "math.log1p"],
    "LogSoftmax": ["nn.log_softmax", "math.log_softmax"],
    "LogicalAnd": ["logical_and", "math.logical_and"],
    "LogicalNot": ["logical_not", "math.logical_not"],
    "LogicalOr": ["logical_or", "math.logical_or"],
    "MatMul": ["matmul", "linalg.matmul"],
    "Max": ["reduce_max", "math.reduce_max"],
    "MaxPool": ["nn.max_pool2d", "nn.max_pool"],
    "Maximum": ["maximum", "math.maximum"],
    "Mean": ["reduce_mean", "math.reduce_mean"],
    "MergeV2Checkpoints": ["io.merge_v2_checkpoints"],
    "Mfcc": ["audio.mfcc"],
    "Min": ["reduce_min", "math.reduce_min"],
    "Minimum": ["minimum", "math.minimum"],
    "MirrorPad": ["mirror_pad"],
    "Mul": ["multiply", "math.multiply"],
    "Neg": ["negative", "math.negative"],
    "NoOp": ["no_op"],
    "NotEqual": ["not_equal", "math.not_equal"],
    "OneHot": ["one_hot"],
    "OnesLike": ["ones_like"],
    "Pack": ["stack"],
    "Pad": ["pad"],
    "PadV2": ["pad_v2"],
    "ParseExample": ["v1.parse_example"],
    "ParseExampleV2": ["io.parse_example"],
    "Pow": ["pow", "math.pow", "power"],
    "PreventGradient": ["prevent_gradient"],
    "Prod": ["reduce_prod", "math.reduce_prod"],
    "Range": ["range"],
    "Rank": ["rank"],
    "ReadVariableOp": ["state.read_variable_op"],
    "RealDiv": ["realdiv", "math.realdiv"],
    "Reciprocal": ["reciprocal", "math.reciprocal"],
    "Relu": ["nn.relu"],
    "Relu6": ["nn.relu6"],
    "Reshape": ["reshape"],
    "ResourceApplyGradientDescent": ["train.resource_apply_gradient_descent"],
    "RestoreV2": ["io.restore_v2"],
    "Round": ["round", "math.round"],
    "Rsqrt": ["rsqrt", "math.rsqrt"],
    "SaveV2": ["io.save_v2"],
    "Select": ["v1.where", "v1.select"],
    "SelectV2": ["where"],
    "Selu": ["nn.selu"],
    "Shape": ["shape"],
    "ShapeN": ["shape_n"],
    "ShardedFilename": ["io.sharded_filename"],
    "ShardedFilespec": ["io.sharded_filespec"],
    "Sigmoid": ["sigmoid", "math.sigmoid", "nn.sigmoid"],
    "Sign": ["sign", "math.sign"],
    "Size": ["size"],
    "Slice": ["slice"],
    "Snapshot": ["snapshot"],
    "Softmax": ["nn.softmax", "math.softmax"],
    "Softplus": ["nn.softplus", "math.softplus"],
    "SpaceToBatchND": ["space_to_batch", "space_to_batch_nd"],
    "Split": ["split"],
    "SplitV": ["split_v"],
    "Sqrt": ["sqrt", "math.sqrt"],
    "Square": ["square", "math.square"],
    "SquaredDifference": ["squared_difference", "math.squared_difference"],
    "Squeeze": ["squeeze"],
    "StaticRegexFullMatch": ["strings.regex_full_match"],
    "StopGradient": ["stop_gradient"],
    "StridedSlice": ["strided_slice"],
    "StringJoin": ["strings.join"],
    "Sub": ["subtract", "math.subtract"],
    "Sum": ["reduce_sum", "math.reduce_sum"],
    "Tanh": ["tanh", "math.tanh", "nn.tanh"],
    "TensorArrayCloseV3": ["tensor_array.tensor_array_close_v3"],
    "TensorArrayGatherV3": ["tensor_array.tensor_array_gather_v3"],
    "TensorArrayReadV3": ["tensor_array.tensor_array_read_v3"],
    "TensorArrayScatterV3": ["tensor_array.tensor_array_scatter_v3"],
    "TensorArraySizeV3": ["tensor_array.tensor_array_size_v3"],
    "TensorArrayV3": ["tensor_array.tensor_array_v3"],
    "TensorArrayWriteV3": ["tensor_array.tensor_array_write_v3"],
    "Tile": ["tile"],
    "Transpose": ["transpose"],
    "Unpack": ["unstack"],
    "VarHandleOp": ["state.var_handle_op"],
    "VarIsInitializedOp": ["state.var_is_initialized_op"],
    "VariableV2": ["state.variable_v2"],
    "ZerosLike": ["zeros_like"],
}

GRAPH_ONLY = {
    "_Arg": "function argument node, made by graph construction",
    "_Retval": "function result node, made by graph construction",
    "_FusedConv2D": "made by the graph optimizer's fusion pass",
    "_FusedDepthwiseConv2dNative": "made by the graph optimizer's fusion pass",
    "_FusedMatMul": "made by the graph optimizer's fusion pass",
    "_PlexusFusedElementwise": "made by the graph optimizer's elementwise fusion",
    "Const": "graph constant; use plexus.constant",
    "Placeholder": "graph input; use plexus.function input signatures",
    "PlaceholderWithDefault": "graph input with a default; graphs only",
    "ControlTrigger": "control-dependency node of v1 control flow",
    "Switch": "v1 control flow, made by graph import",
    "Merge": "v1 control flow, made by graph import",
    "Enter": "v1 control flow (loop frames), made by graph import",
    "Exit": "v1 control flow (loop frames), made by graph import",
    "NextIteration": "v1 control flow (loop frames), made by graph import",
    "LoopCond": "v1 control flow (loop frames), made by graph import",
    "If": "takes function attributes; made by tracing or graph import",
    "StatelessIf": "takes function attributes; made by tracing or graph import",
    "While": "takes function attributes; made by tracing or graph import",
    "StatelessWhile": "takes function attributes; made by tracing or graph import",
    "PartitionedCall": "calls a library function; made by tracing or graph import",
    "StatefulPartitionedCall": "calls a library function; made by tracing or graph import",
    "BroadcastGradientArgs": "helper of gradient graphs",
}


def snake_case(op_name):
    """The snake_case spelling of an op name: "BatchMatMulV2" -> "batch_mat_mul_v2"."""
    out = []
    name = op_name.lstrip("_")
    for i, c in enumerate(name):
        if c.isupper() and i > 0:
            prev = name[i - 1]
            nxt = name[i + 1] if i + 1 < len(name) else ""
            if prev.islower() or prev.isdigit() or (nxt.islower() and prev.isupper()):
                out.append("_")
        out.append(c.lower())
    return "".join(out)


def split_name(qualified):
    """("nn", "relu") for "nn.relu"; ("", "add") for "add"."""
    ns, _, name = qualified.rpartition(".")
    return ns, name
