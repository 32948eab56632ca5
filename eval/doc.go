// Package eval measures search quality offline: it runs labelled queries
// (scorer.LabelledQuery) against a user's local index with several ranker
// variants side by side, and reports recall@1/5/10, MRR@10 and nDCG@10 per
// query kind and overall, the share of negative queries answered with
// nothing, per-query detail, and TREC run and qrels files for external
// tools (trec_eval, ir_measures). It makes no API calls.
//
// The package also holds a faithful implementation of the reference
// server's live search (reference.go), the benchmark that compares it
// with opsearch's index (bench.go), and the scale benchmark (scale.go)
// that measures opsearch alone at several corpus sizes.
//
// It owns the evaluation run (variants, Run and its Report, the table,
// detail and TREC outputs), the reference search and the benchmark. It
// must not know how queries are made (querygen makes them; a run only
// reads them) nor how a ranker scores: a variant picks a ranker that
// lives elsewhere (the scorer, opsearch's index, bleve with its
// defaults) and sets its parameters and weights, and recall, MRR and
// nDCG are computed by scorer's functions. Nor does it know a live user:
// a run reads the store and index it is handed; only the reference
// search and the benchmark's in-process fake talk to an API.
package eval
