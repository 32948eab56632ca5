// Package optest is a fake OpenProject server for tests, benchmarks and
// demos. It serves a Dataset over the API v3 wire format (HAL+JSON) and
// imitates the behaviours of the real server that a naive fake gets wrong:
// 1-based page offsets, silently capped page sizes, the open-only default
// work package filter, 404 instead of 403 for hidden resources, per-project
// permissions from roles (Dataset.Roles, Memberships, the Non member role)
// and work package shares, internal comments, unpaginated
// activity lists, comments that move updatedAt but not lockVersion,
// attachments of work packages, wiki pages and meetings with their
// content (an External one redirects to a presigned URL of an S3-like
// storage the server runs on a second listener, storage.go), and the
// differences between server generations (see Profile). It also injects
// latency and faults on demand and counts requests.
//
// It owns the wire: the routes (routes.go), one handler file per
// resource, the HAL rendering (hal.go), filters, sorting, select and
// paging, the writes (mutate.go), faults, the conformance tables against
// the real payloads (conformance.go), and the Dataset it serves, with
// Validate, LoadDataset, SaveDataset and the well-known API keys.
// Programs run it with Listen, tests with internal/optesting.Start.
//
// It must not know how a data set is made: opgen generates them and
// converts corpora. Nor does it know search or evaluation (eval,
// eval/querygen). Its non-test files import neither testing nor
// net/http/httptest, because the opsearch binary links the package.
package optest
