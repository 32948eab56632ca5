// Package access decides what one user may see of a store and index
// shared by every user of an OpenProject instance, from what OpenProject
// answers to that user's own key.
//
// OpenProject has no request that says "which of these documents may
// this user read", and asking item by item would cost a crawl per user.
// So Compute asks only what is cheap and compares it with what the
// shared store holds (Holdings):
//
//   - the projects list: the projects the user sees, and with each its
//     project document;
//   - one work package count grouped by project: where the user's count
//     equals the store's, the user sees all of that project's work
//     packages; elsewhere (a role without view_work_packages but a
//     shared work package, or a store behind) one id-only listing of
//     those projects names them;
//   - the meetings list, whose ids compare per project;
//   - wiki pages, which OpenProject lists nowhere: one known page of each
//     project fetched with the user's key (the permission is per
//     project, view_wiki_pages);
//   - internal comments: the activities of one work package of each
//     project whose stored comments include internal ones.
//
// The counts rule is exact when the store holds at least what the user
// sees, which a sync with the user's key establishes first: then equal
// counts mean equal sets. Where the user sees something the store lacks,
// View.Missing names it, and the caller syncs before trusting the view.
//
// The probes cost a request per project, and the id listing is worth
// repeating even when the counts have not moved (a share swapped for
// another keeps them). So a refresh asks again only a few of the answers
// nothing has contradicted (Options.Probes, the oldest first) and takes
// the others over from the previous view, whose age View.CheckedAt
// reports; a new project, a moved count and a Full refresh (a key's
// validation) ask at once. With the defaults a refresh where nothing
// changed costs five requests: projects, counts, meetings and two
// re-checks.
package access
