package optest

// The tables below document where the fake's HAL deliberately differs from
// the real payloads in shared/openproject-api/examples. Keys are paths:
// "name" for a top-level property, "_links.name" and "_embedded.name" for
// links and embedded resources, and the same prefixed with "elements." for
// the first element of a collection. conformance_test.go fails on any
// other difference. The tables are read-only.

// OmittedKeys lists, per example file, the keys of the real payload the
// fake deliberately does not render.
var OmittedKeys = map[string][]string{
	"attachment.json": {
		// The spec example spells it "filesize"; the code (and so the real
		// server) renders "fileSize", which the fake follows.
		"filesize",
	},
	"project.json": {
		// Custom fields are not modelled.
		"customField123",
		"_links.customField456",
	},
	"root_legacy_path_example.json": {
		// A 10.x-era root; the legacy profile imitates 13–17, whose root
		// is the current one (root.json), without a users link.
		"_links.users",
	},
	"user.json": {
		// Administrative action links; the fake has no user management.
		"_links.updateImmediately",
		"_links.lock",
		"_links.delete",
	},
	"work_package.json": {
		// Action links for features the fake does not model (time
		// tracking, moving, custom actions, watchers, relations,
		// re-parenting through a form).
		"_links.logTime",
		"_links.move",
		"_links.customActions",
		"_links.availableWatchers",
		"_links.watch",
		"_links.addWatcher",
		"_links.removeWatcher",
		"_links.addRelation",
		"_links.changeParent",
		// Custom fields are not modelled.
		"customField1",
		"customField2",
		"_links.customField3",
	},
}

// ExtraKeys lists, per example file, keys the fake renders that the
// example lacks.
var ExtraKeys = map[string][]string{
	"activity_collection.json": {
		// The collection example is 2014-era; 2025 servers (the current
		// profile) render these on every activity, see activity_comment.json.
		"elements.internal",
		"elements._embedded",
		"elements._links.attachments",
		"elements._links.addAttachment",
	},
	"activity_comment_schema_example.json": {
		// The real server renders update for comments the caller may edit
		// (its author, administrators); the example viewer could not.
		"_links.update",
	},
	"activity_comment_view_activity_path.json": {
		// As above.
		"_links.update",
	},
	"attachment.json": {
		// See OmittedKeys: the code's spelling of "filesize".
		"fileSize",
		// The representer renders delete for a caller who may edit the
		// container or wrote the attachment (attachment_model.yml); the
		// example's caller could not.
		"_links.delete",
	},
	"meeting.json": {
		// Participants are not documented in the real meeting payload; the
		// fake renders them as an array of user links (our choice).
		"_links.participants",
	},
	"meeting_schema_example.json": {
		// The meeting representer renders location and an attachments
		// embed; the older spec example leaves them out.
		"location",
		"_embedded.attachments",
		// Our choice, as for meeting.json.
		"_links.participants",
	},
	"meeting_view_path.json": {
		// As for meeting_schema_example.json; this older example also
		// leaves out endTime, which the representer renders.
		"location",
		"endTime",
		"_embedded.attachments",
		"_links.participants",
	},
	"root_legacy_path_example.json": {
		// The legacy profile renders the 13–17 root (root.json).
		"_type",
		"_links.self",
		"_links.memberships",
		"_links.time_entries",
	},
	"wiki_page.json": {
		// The current profile imitates the newest WikiPageRepresenter,
		// which renders the page text, slug, lock version and timestamps;
		// the legacy profile renders exactly the example's keys.
		"slug",
		"text",
		"lockVersion",
		"createdAt",
		"updatedAt",
	},
	"work_package.json": {
		// lockVersion is required by the schema (work_package_model.yml)
		// and by PATCH; the example leaves it out.
		"lockVersion",
		// The real server embeds status, type, priority, project, author
		// and assignee/responsible in full; the example shows no embeds.
		"_embedded",
	},
	"work_package_collection.json": {
		// The example is shortened: the real WorkPackageCollection is
		// offset-paginated (pageSize, offset, jumpTo, changeSize,
		// nextByOffset/previousByOffset) and embeds and links the schemas
		// of its elements.
		"pageSize",
		"offset",
		"_links.jumpTo",
		"_links.changeSize",
		"_links.nextByOffset",
		"_links.previousByOffset",
		"_links.schemas",
		"_embedded.schemas",
	},
	"work_package_collection_by_project.json": {
		// As for work_package_collection.json.
		"pageSize",
		"offset",
		"_links.jumpTo",
		"_links.changeSize",
		"_links.nextByOffset",
		"_links.previousByOffset",
		"_links.schemas",
		"_embedded.schemas",
	},
}

// NullableKeys lists, per example file, keys the fake renders as null
// where the example shows a value.
var NullableKeys = map[string][]string{
	"work_package.json": {
		// Estimates are not modelled; the real server renders null for a
		// work package without an estimate.
		"estimatedTime",
		"derivedEstimatedTime",
	},
}
