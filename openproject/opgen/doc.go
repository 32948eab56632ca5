// Package opgen produces the data sets the fake OpenProject server
// (package optest) serves: Generate builds a deterministic, realistic one
// from a seed (GenOptions; vocabulary and templates in words.go), and
// CorpusDataset, ReadCorpus and LoadAny turn the neutral corpus format of
// labelled evaluation sets into one.
//
// It owns how generated data looks: the fixed users, projects, statuses,
// types and priorities, the independent random streams every part draws
// from (Rand), the attached files (every format the indexer reads, plus
// an image, a corrupt and an oversized file, made on demand from a
// recipe: files.go, content.go, pdf.go), and the guarantee that the same
// options give the same data byte for byte once encoded (and the same
// file bytes).
//
// It must not know the wire format: HAL, HTTP, routes, paging and faults
// belong to optest, which knows nothing of how its data was made. It does
// not label queries or judge rankings either: that is eval and
// eval/querygen, which read generated data sets like any other.
package opgen
