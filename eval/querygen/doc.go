// Package querygen builds labelled query sets for evaluation: from a data
// set of the fake OpenProject (optest.Dataset, usually one opgen
// generated) it derives queries of several kinds, each with the items a
// good engine must return, checked to be unambiguous in what the chosen
// user can see (Generate, Options, Kinds). eval and the fakeop --queries
// flag consume them.
//
// It owns the query kinds, their vocabulary (question frames, synonyms,
// filler words) and the guarantee that the same data set and options give
// the same queries byte for byte: the relevance figures and golden files
// of eval depend on it. Its random streams come from opgen.Rand, numbered
// from opgen.StreamQueries+100 on.
//
// It must not know how data is served or generated beyond the data set's
// shape and opgen's fixed ids, nor how an engine ranks: it never runs a
// search, so a miss in the evaluation is the engine's fault, not the set's.
package querygen
