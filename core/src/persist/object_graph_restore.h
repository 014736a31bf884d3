// Restoring a TF2 SavedModel's variables through its object graph, as
// TensorFlow's own loader does: node i of the SavedModel's object graph
// (SavedObjectGraph) is node i of the checkpoint's object graph
// (TrackableObjectGraph, the checkpoint's _CHECKPOINTABLE_OBJECT_GRAPH
// entry), whose VARIABLE_VALUE attribute names the tensor that holds the
// variable's value ("model/_operations/1/_kernel/.ATTRIBUTES/VARIABLE_VALUE"
// from Keras 3, "_layers/1/_kernel/..." and the like, at any depth).
//
// It serves the SavedModels whose SaverDef restore op writes other variable
// handles than the ones their signatures read (Keras 3 models saved with
// tf.saved_model.save): variables the restore op left uninitialized get
// their values here.
#ifndef PLEXUS_SRC_PERSIST_OBJECT_GRAPH_RESTORE_H_
#define PLEXUS_SRC_PERSIST_OBJECT_GRAPH_RESTORE_H_

#include "absl/status/statusor.h"
#include "exec/session_state.h"
#include "plexus/saved_model.h"

namespace plexus {

// Assigns every variable of the model's object graph that `store` does not
// hold initialized yet from the checkpoint at model.variables_prefix().
// Returns how many it assigned; 0 when the model has no object graph or the
// checkpoint none. Errors name the variable and the checkpoint key.
absl::StatusOr<int> RestoreFromObjectGraph(const SavedModel& model, ResourceStore& store);

}  // namespace plexus

#endif  // PLEXUS_SRC_PERSIST_OBJECT_GRAPH_RESTORE_H_
