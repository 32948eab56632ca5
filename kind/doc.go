// Package kind names the kinds of OpenProject entity opsearch keeps:
// projects, work packages, their activities (comments and change
// journals), wiki pages and meetings. It is the one vocabulary every
// other package shares, so a kind is spelled one way everywhere it leaves
// the process: in MCP and REST answers, CLI output, sync reports, sync
// status, metrics labels and logs, always in the singular ("work_package").
//
// # What it owns
//
// The Kind type, its constants, the fixed order of All, and Parse, which
// also accepts the plural spellings ("work_packages") earlier versions
// printed, so inputs written against them keep working.
//
// # What it must not know
//
// Anything about storage or indexing. How package store names a kind's
// bbolt bucket (the plural, fixed by the file format) and which kinds
// package indexer makes documents of (all but activities, which are part
// of their work package's document) belong to those packages. This package
// imports nothing of opsearch, so every layer may depend on it.
package kind
