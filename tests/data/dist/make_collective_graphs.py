"""Writes the TensorFlow graphs with collective ops that the distributed tests import.

Run with TensorFlow installed (the test venv has tensorflow-cpu):
    python tests/data/dist/make_collective_graphs.py tests/data/dist

collective_step.pb: a tf.function that TensorFlow traced, as a frozen GraphDef:
  inputs  x: float32 [4, 3]
  outputs mean: CollectiveReduceV2(x * 2, Add, Div) over group 7 of 2
          gathered: CollectiveGatherV2(x) over group 7 of 2       ([8, 3])
          total: CollectiveReduceV2 of an int64 count (Add, Id)
The group size is a graph constant (2), so the graph runs under plexus-run --nproc 2.

bcast_send.pb, bcast_recv.pb: CollectiveBcastSendV2 and CollectiveBcastRecvV2
of a float32 [2, 2] over group 11 of 2, which rank 0 and rank 1 run.
"""
import os
import sys

import tensorflow as tf


def freeze(fn, *specs):
    return fn.get_concrete_function(*specs).graph.as_graph_def()


@tf.function
def collective_step(x):
    mean = tf.raw_ops.CollectiveReduceV2(input=x * 2.0, group_size=2, group_key=7, instance_key=1,
                                         ordering_token=[], merge_op="Add", final_op="Div")
    gathered = tf.raw_ops.CollectiveGatherV2(input=x, group_size=2, group_key=7, instance_key=2, ordering_token=[])
    count = tf.raw_ops.CollectiveReduceV2(input=tf.constant([1], tf.int64), group_size=2, group_key=7,
                                          instance_key=3, ordering_token=[], merge_op="Add", final_op="Id")
    return tf.identity(mean, name="mean"), tf.identity(gathered, name="gathered"), tf.identity(count, name="total")


@tf.function
def bcast_send(x):
    return tf.identity(tf.raw_ops.CollectiveBcastSendV2(input=x, group_size=2, group_key=11, instance_key=1),
                       name="sent")


@tf.function
def bcast_recv():
    return tf.identity(tf.raw_ops.CollectiveBcastRecvV2(group_size=2, group_key=11, instance_key=1,
                                                        shape=[2, 2], T=tf.float32), name="received")


def main(out):
    os.makedirs(out, exist_ok=True)
    spec = tf.TensorSpec([4, 3], tf.float32, name="x")
    graphs = {
        "collective_step.pb": freeze(collective_step, spec),
        "bcast_send.pb": freeze(bcast_send, tf.TensorSpec([2, 2], tf.float32, name="x")),
        "bcast_recv.pb": freeze(bcast_recv),
    }
    for name, g in graphs.items():
        with open(os.path.join(out, name), "wb") as f:
            f.write(g.SerializeToString())
        print(name, [n.op for n in g.node])


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__)))
