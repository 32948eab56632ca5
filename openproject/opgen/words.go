package opgen

// Vocabulary and templates for the data generator. Everything here is
// read-only after package initialisation.
//
// Templates are expanded by writer.expand (writer.go):
//
//	{slot}     a slot, replaced by a random value (see writer.slot)
//	{a|b|c}    one of the alternatives, chosen uniformly; alternatives may
//	           be empty and may contain slots and further alternatives
//
// Literal braces are written {lb} and {rb}.
//
// The lists are deliberately large and spread over many domains so that a
// search index built on generated text sees a realistic vocabulary (a long
// tail of rare words, not a few hundred words repeated) and so that projects
// of different domains are distinguishable by their words.

// domain is the vocabulary of one area of work. Projects belong to a domain,
// and most nouns in their texts come from it.
type domain struct {
	name       string
	nouns      []string // lowercase, singular, may be several words
	components []string // services, modules, jobs: kebab-case
	screens    []string // screens, documents, artefacts people point at
	roles      []string // who uses or asks for things
	idents     []string // lowercase roots for identifiers (camelCase, snake_case)
}

var (
	domInfra = &domain{
		name: "infrastructure",
		nouns: []string{"load balancer", "ingress controller", "node pool", "persistent volume", "backup job",
			"DNS zone", "TLS certificate", "firewall rule", "VPN tunnel", "bastion host", "container image",
			"base image", "Helm chart", "Terraform module", "state file", "autoscaler", "cron job", "disk quota",
			"log retention", "alerting rule", "on-call rotation", "status page", "maintenance window",
			"service mesh", "sidecar", "reverse proxy", "object storage bucket", "replica set", "failover",
			"kernel patch", "package mirror", "artifact registry", "build agent", "runner fleet", "secret store",
			"network policy", "egress gateway", "NAT gateway", "subnet", "routing table", "IPv6 rollout",
			"hypervisor", "bare-metal server", "rack", "power supply", "UPS battery", "cooling unit",
			"disaster recovery drill", "capacity plan", "cost report", "reserved instance", "spot instance",
			"health check", "liveness probe", "readiness probe", "resource limit", "memory limit", "CPU throttling",
			"inode usage", "swap partition", "NTP drift", "syslog forwarder", "time series database"},
		components: []string{"ingress-nginx", "cert-manager", "cluster-autoscaler", "backup-runner", "log-shipper",
			"metrics-gateway", "dns-updater", "vault-agent", "ci-runner", "image-builder", "edge-proxy", "node-exporter"},
		screens: []string{"Grafana dashboard", "alert overview", "capacity sheet", "runbook", "cluster inventory",
			"network diagram", "cost explorer", "incident channel", "status page", "deployment pipeline"},
		roles:  []string{"SRE", "platform engineer", "on-call engineer", "network admin", "release manager", "DBA"},
		idents: []string{"node", "cluster", "volume", "backup", "cert", "probe", "route", "zone", "quota", "replica", "snapshot", "lease"},
	}
	domFrontend = &domain{
		name: "frontend",
		nouns: []string{"navigation bar", "landing page", "hero banner", "cookie banner", "footer", "breadcrumb",
			"date picker", "dropdown", "modal dialog", "toast notification", "tooltip", "carousel", "search box",
			"autocomplete", "form validation", "error message", "loading spinner", "skeleton screen", "dark mode",
			"colour palette", "typography scale", "icon set", "design token", "component library", "style guide",
			"responsive layout", "grid system", "breakpoint", "font loading", "image optimisation", "lazy loading",
			"bundle size", "code splitting", "service worker", "offline mode", "web vitals", "layout shift",
			"first contentful paint", "screen reader", "focus trap", "keyboard navigation", "alt text",
			"contrast ratio", "translation string", "locale switcher", "right-to-left layout", "SEO metadata",
			"sitemap", "canonical URL", "redirect map", "404 page", "contact form", "newsletter signup",
			"pricing table", "testimonial slider", "video embed", "accessibility statement", "favicon"},
		components: []string{"web-shell", "design-system", "checkout-ui", "account-ui", "cms-frontend", "search-ui",
			"marketing-site", "docs-portal", "admin-console", "storybook"},
		screens: []string{"home page", "checkout page", "account settings page", "login page", "pricing page",
			"product detail page", "search results page", "onboarding wizard", "admin console", "style guide"},
		roles:  []string{"visitor", "content editor", "UX designer", "frontend developer", "screen reader user", "product owner"},
		idents: []string{"menu", "banner", "form", "field", "modal", "toast", "theme", "locale", "layout", "widget", "slot", "route"},
	}
	domBackend = &domain{
		name: "backend",
		nouns: []string{"REST endpoint", "GraphQL schema", "webhook", "rate limiter", "API gateway", "access token",
			"refresh token", "session store", "background worker", "job queue", "dead letter queue", "message broker",
			"event bus", "domain event", "outbox table", "read model", "database migration", "connection pool",
			"query planner", "slow query", "N+1 query", "pagination cursor", "ETag", "idempotency key", "retry policy",
			"circuit breaker", "feature flag", "config file", "environment variable", "API version",
			"deprecation header", "OpenAPI spec", "client SDK", "serialization format", "JSON schema",
			"batch import", "CSV export", "search index", "full-text search", "cache invalidation", "TTL",
			"distributed lock", "leader election", "health endpoint", "request ID", "correlation ID", "audit trail",
			"multi-tenancy", "tenant isolation", "partner API", "sandbox environment", "API key", "scope"},
		components: []string{"api-gateway", "auth-service", "notification-service", "search-service", "user-service",
			"webhook-dispatcher", "job-scheduler", "import-worker", "export-worker", "graphql-server", "event-relay"},
		screens: []string{"API reference", "OpenAPI spec", "Swagger UI", "partner documentation", "changelog",
			"integration guide", "sandbox", "developer portal", "architecture diagram", "sequence diagram"},
		roles:  []string{"API consumer", "integration partner", "backend developer", "architect", "tech lead", "mobile team"},
		idents: []string{"user", "session", "token", "request", "event", "job", "queue", "webhook", "tenant", "cursor", "schema", "endpoint"},
	}
	domBilling = &domain{
		name: "billing",
		nouns: []string{"invoice", "credit note", "payment intent", "refund", "chargeback", "dunning run",
			"payment reminder", "subscription", "plan upgrade", "proration", "trial period", "coupon code",
			"discount rule", "VAT rate", "reverse charge", "tax ID", "billing address", "SEPA mandate",
			"direct debit", "card payment", "3-D Secure challenge", "payment method", "wallet", "payout",
			"settlement report", "reconciliation", "ledger entry", "general ledger", "cost centre", "revenue report",
			"usage record", "metered billing", "price list", "currency conversion", "exchange rate", "rounding rule",
			"invoice number range", "e-invoice", "XRechnung", "ZUGFeRD", "PDF invoice", "payment provider",
			"fraud check", "failed payment", "partial payment", "overpayment", "customer balance", "payment term",
			"late fee", "quote", "order confirmation"},
		components: []string{"billing-service", "invoice-renderer", "payment-gateway", "dunning-job", "tax-engine",
			"ledger-sync", "payout-worker", "subscription-service", "pricing-engine", "reconciler"},
		screens: []string{"invoice PDF", "billing overview", "payment settings", "subscription page",
			"revenue dashboard", "dunning report", "settlement report", "checkout", "customer statement", "price sheet"},
		roles:  []string{"accountant", "billing admin", "finance controller", "customer", "reseller", "tax advisor"},
		idents: []string{"invoice", "payment", "refund", "ledger", "mandate", "plan", "coupon", "tax", "payout", "balance", "price", "amount"},
	}
	domHR = &domain{
		name: "hr",
		nouns: []string{"job posting", "job description", "candidate pipeline", "interview loop", "interview scorecard",
			"offer letter", "employment contract", "probation period", "onboarding checklist", "buddy programme",
			"laptop provisioning", "welcome pack", "first-day schedule", "payroll run", "salary band",
			"compensation review", "bonus scheme", "holiday allowance", "sick leave", "parental leave",
			"remote work policy", "travel policy", "expense claim", "time tracking", "overtime rule",
			"performance review", "360 feedback", "career ladder", "training budget", "learning path",
			"mentoring programme", "employee survey", "engagement score", "team offsite", "org chart",
			"headcount plan", "exit interview", "reference letter", "works council", "works agreement",
			"company handbook", "code of conduct", "whistleblower channel", "background check", "relocation package",
			"visa application", "work permit", "equipment return", "access revocation", "anniversary"},
		components: []string{"hr-portal", "applicant-tracker", "payroll-export", "leave-planner", "onboarding-bot",
			"expense-app", "people-directory", "survey-tool"},
		screens: []string{"careers page", "onboarding checklist", "leave calendar", "org chart", "payroll export",
			"people directory", "employee handbook", "interview guide", "offer template", "training catalogue"},
		roles:  []string{"recruiter", "hiring manager", "new joiner", "team lead", "HR business partner", "payroll specialist", "works council member"},
		idents: []string{"employee", "candidate", "offer", "leave", "payroll", "contract", "review", "survey", "expense", "team", "salary", "position"},
	}
	domMarketing = &domain{
		name: "marketing",
		nouns: []string{"campaign brief", "landing page copy", "email newsletter", "drip sequence", "lead magnet",
			"webinar", "trade fair booth", "press release", "case study", "customer testimonial", "brand guideline",
			"logo variant", "tagline", "social media calendar", "LinkedIn post", "ad budget", "ad creative",
			"retargeting audience", "conversion rate", "click-through rate", "attribution model", "UTM parameter",
			"A/B test", "lead scoring", "marketing qualified lead", "event sponsorship", "swag order",
			"product launch", "launch video", "blog article", "editorial calendar", "keyword research",
			"backlink", "brand awareness", "share of voice", "persona", "customer journey", "messaging framework",
			"competitive analysis", "pricing page copy", "partner co-marketing", "influencer outreach",
			"podcast episode", "photo shoot", "print brochure", "roll-up banner", "giveaway", "unsubscribe rate"},
		components: []string{"newsletter-tool", "crm-sync", "lead-router", "web-analytics", "ad-manager",
			"cms", "event-registration", "social-scheduler"},
		screens: []string{"campaign dashboard", "editorial calendar", "brand book", "media kit", "event agenda",
			"newsletter template", "landing page", "launch plan", "press kit", "booth layout"},
		roles:  []string{"marketing manager", "copywriter", "graphic designer", "event manager", "growth hacker", "sales rep", "agency"},
		idents: []string{"campaign", "lead", "audience", "creative", "channel", "segment", "event", "funnel", "newsletter", "asset", "utm", "budget"},
	}
	domLegal = &domain{
		name: "legal",
		nouns: []string{"data processing agreement", "privacy policy", "cookie policy", "terms of service",
			"imprint", "consent record", "records of processing", "data protection impact assessment",
			"subprocessor list", "standard contractual clauses", "retention schedule", "deletion request",
			"data subject access request", "legal hold", "non-disclosure agreement", "master services agreement",
			"statement of work", "service level agreement", "liability cap", "indemnity clause", "termination clause",
			"renewal clause", "governing law", "trademark registration", "copyright notice", "open source licence",
			"licence audit", "export control", "sanctions screening", "whistleblowing policy", "ISO 27001 audit",
			"SOC 2 report", "vendor assessment", "security questionnaire", "breach notification", "DPO opinion",
			"cross-border transfer", "contract template", "signature workflow", "power of attorney",
			"board resolution", "compliance training", "policy exception", "risk register"},
		components: []string{"contract-repository", "consent-service", "dsar-workflow", "policy-portal",
			"signature-service", "retention-job"},
		screens: []string{"contract register", "privacy notice", "consent dialog", "DPA template", "risk register",
			"policy portal", "audit report", "vendor file", "compliance calendar", "signature log"},
		roles:  []string{"legal counsel", "data protection officer", "compliance officer", "procurement", "external auditor", "works council"},
		idents: []string{"contract", "consent", "policy", "clause", "request", "retention", "vendor", "audit", "signature", "risk", "notice", "record"},
	}
	domData = &domain{
		name: "data",
		nouns: []string{"data pipeline", "ETL job", "ingestion job", "staging table", "fact table", "dimension table",
			"star schema", "data warehouse", "data lake", "lakehouse", "partition scheme", "Parquet file",
			"schema drift", "data contract", "data catalogue", "lineage graph", "data quality check", "freshness SLA",
			"backfill", "incremental load", "change data capture", "slowly changing dimension", "surrogate key",
			"deduplication step", "late-arriving event", "watermark", "window function", "materialized view",
			"semantic layer", "metric definition", "KPI dashboard", "cohort analysis", "retention curve",
			"churn model", "forecast model", "feature store", "training set", "notebook", "ad-hoc query",
			"query cost", "warehouse credit", "row-level security", "PII column", "anonymisation job",
			"sampling strategy", "outlier", "null rate", "histogram", "data dictionary"},
		components: []string{"ingest-worker", "dbt-project", "airflow-dags", "warehouse-loader", "cdc-connector",
			"metrics-layer", "quality-monitor", "export-job", "feature-store"},
		screens: []string{"KPI dashboard", "lineage graph", "data catalogue", "revenue dashboard", "cohort report",
			"Metabase question", "Jupyter notebook", "data dictionary", "freshness report", "weekly metrics email"},
		roles:  []string{"data analyst", "data engineer", "analytics engineer", "data scientist", "controller", "product analyst"},
		idents: []string{"event", "metric", "table", "partition", "batch", "record", "row", "column", "dataset", "model", "feature", "snapshot"},
	}
	domSecurity = &domain{
		name: "security",
		nouns: []string{"penetration test", "vulnerability scan", "CVE advisory", "dependency audit", "SBOM",
			"secret scanning", "leaked credential", "password policy", "two-factor authentication", "passkey",
			"single sign-on", "SAML assertion", "OIDC client", "session timeout", "brute-force protection",
			"account lockout", "CSRF token", "content security policy", "XSS filter", "SQL injection",
			"input sanitisation", "security header", "HSTS", "TLS configuration", "cipher suite", "key rotation",
			"HSM", "encryption at rest", "access review", "privilege escalation", "least privilege", "role mapping",
			"audit log", "SIEM rule", "intrusion detection", "phishing simulation", "security awareness training",
			"incident response plan", "bug bounty report", "threat model", "attack surface", "WAF rule", "DDoS protection"},
		components: []string{"auth-proxy", "secret-scanner", "waf", "siem-forwarder", "key-service", "sso-bridge", "audit-logger"},
		screens: []string{"security dashboard", "pentest report", "threat model", "access review sheet",
			"SIEM console", "incident playbook", "risk matrix", "vulnerability tracker"},
		roles:  []string{"security engineer", "CISO", "pentester", "auditor", "administrator", "incident commander"},
		idents: []string{"credential", "secret", "key", "role", "permission", "grant", "policy", "session", "cipher", "nonce", "claim", "principal"},
	}
	domMobile = &domain{
		name: "mobile",
		nouns: []string{"push notification", "deep link", "app store listing", "release build", "beta track",
			"TestFlight build", "crash report", "ANR", "app startup time", "splash screen", "bottom sheet",
			"tab bar", "swipe gesture", "pull-to-refresh", "offline sync", "local database", "background fetch",
			"biometric login", "camera permission", "location permission", "in-app purchase", "app review prompt",
			"dynamic type", "tablet layout", "foldable layout", "widget", "app clip", "battery drain",
			"memory warning", "image cache", "network reachability", "certificate pinning", "minimum OS version",
			"feature toggle", "release notes", "phased rollout", "store screenshot", "app size", "QR scanner"},
		components: []string{"ios-app", "android-app", "push-service", "mobile-bff", "sync-engine", "release-train"},
		screens: []string{"home tab", "settings screen", "login screen", "order history screen", "scanner view",
			"app store listing", "notification centre", "profile screen", "onboarding carousel"},
		roles:  []string{"iOS developer", "Android developer", "beta tester", "field technician", "app user", "store reviewer"},
		idents: []string{"screen", "view", "push", "sync", "cache", "permission", "device", "build", "gesture", "badge", "tab", "store"},
	}
	domSupport = &domain{
		name: "support",
		nouns: []string{"support ticket", "first response time", "resolution time", "escalation path", "macro",
			"canned response", "knowledge base article", "help centre", "chat widget", "phone queue",
			"customer satisfaction score", "NPS survey", "churn risk", "renewal call", "health score",
			"onboarding call", "training session", "feature request", "bug report", "customer feedback",
			"account review", "success plan", "support tier", "SLA breach", "after-hours coverage",
			"ticket backlog", "ticket tag", "customer portal", "community forum", "status update", "refund request",
			"data export request", "user import", "account merge", "password reset", "shift schedule"},
		components: []string{"helpdesk", "chat-widget", "kb-search", "ticket-router", "customer-portal", "sla-monitor"},
		screens: []string{"ticket queue", "help centre", "customer portal", "macro library", "CSAT report",
			"account health view", "escalation matrix", "support handbook"},
		roles:  []string{"support agent", "customer success manager", "key account", "team lead", "customer", "partner"},
		idents: []string{"ticket", "customer", "account", "agent", "macro", "article", "queue", "reply", "rating", "shift", "tag", "case"},
	}
	domResearch = &domain{
		name: "research",
		nouns: []string{"hypothesis", "literature review", "experiment design", "control group", "baseline model",
			"ablation study", "evaluation metric", "benchmark suite", "annotation guideline", "labelled sample",
			"inter-annotator agreement", "confusion matrix", "precision-recall curve", "hyperparameter sweep",
			"embedding model", "tokenizer", "reranker", "retrieval pipeline", "relevance judgement", "query log",
			"click model", "statistical significance", "confidence interval", "p-value", "effect size",
			"preprint", "conference submission", "camera-ready version", "reviewer comment", "lab notebook",
			"GPU budget", "compute grant", "reproducibility checklist", "research log", "interview study"},
		components: []string{"eval-harness", "annotation-tool", "training-loop", "notebook-server", "experiment-tracker"},
		screens: []string{"lab notebook", "results table", "paper draft", "experiment tracker", "poster",
			"slide deck", "reading list"},
		roles:  []string{"researcher", "PhD student", "reviewer", "co-author", "annotator", "supervisor"},
		idents: []string{"sample", "run", "score", "corpus", "query", "label", "split", "epoch", "weight", "embedding", "judgement", "trial"},
	}
	domFinance = &domain{
		name: "finance",
		nouns: []string{"annual budget", "budget line", "forecast", "reforecast", "variance analysis", "cost centre",
			"capex request", "opex", "purchase order", "approval limit", "accrual", "deferred revenue", "cash flow",
			"runway", "burn rate", "headcount cost", "travel budget", "software spend", "licence cost",
			"vendor invoice", "quarter close", "month-end close", "audit adjustment", "board pack",
			"investor update", "depreciation schedule", "FX exposure", "bank guarantee", "credit line",
			"expense policy", "spend report", "savings target", "business case", "ROI calculation"},
		components: []string{"budget-model", "spend-tracker", "close-checklist", "forecast-sheet", "po-workflow"},
		screens: []string{"budget spreadsheet", "board pack", "variance report", "forecast model", "spend dashboard",
			"close checklist", "cash flow statement"},
		roles:  []string{"CFO", "controller", "budget owner", "department head", "auditor", "bookkeeper"},
		idents: []string{"budget", "forecast", "accrual", "account", "period", "variance", "spend", "approval", "order", "line", "center", "fx"},
	}

	// domains lists every domain; cross-domain words are drawn from it.
	domains = []*domain{domInfra, domFrontend, domBackend, domBilling, domHR, domMarketing, domLegal,
		domData, domSecurity, domMobile, domSupport, domResearch, domFinance}
)

// projectSpec is a project the generator can create. The first three are
// always created, in this order: a project shared by alice and bob, alice's
// private project, and bob's private project.
type projectSpec struct {
	name, identifier string
	dom              *domain
	codename         string
	summary          string // first sentence of the description
}

var projectSpecs = []projectSpec{
	{"Website Relaunch", "website-relaunch", domFrontend, "Heron", "Relaunch of the public website on the new design system, with a faster checkout and a rewritten help centre."},
	{"Alice Private Research", "alice-private", domResearch, "Nightingale", "Alice's private notes on search relevance experiments; not shared with anybody else."},
	{"Bob Private Budget", "bob-private", domFinance, "Kestrel", "Bob's private budget planning for the next fiscal year; confidential until the board meeting."},
	{"Mobile App", "mobile-app", domMobile, "Osprey", "Native iOS and Android apps for customers and field staff."},
	{"Data Platform", "data-platform", domData, "Kingfisher", "Central warehouse, ingestion pipelines and the metrics layer every team reports from."},
	{"Customer Portal", "customer-portal", domSupport, "Albatross", "Self-service portal where customers manage accounts, tickets and downloads."},
	{"Infrastructure", "infrastructure", domInfra, "Puffin", "Kubernetes clusters, networking, backups and everything the on-call team keeps alive."},
	{"Payments", "payments", domBilling, "Wren", "Card, SEPA and wallet payments, refunds and the reconciliation with accounting."},
	{"HR Onboarding", "hr-onboarding", domHR, "Magpie", "Everything a new joiner needs from the signed contract to the end of probation."},
	{"Marketing Campaigns", "marketing-campaigns", domMarketing, "Lapwing", "Campaign planning, newsletters, events and the editorial calendar."},
	{"Legal & Compliance", "legal-compliance", domLegal, "Curlew", "Contracts, privacy, audits and the compliance calendar."},
	{"Security Hardening", "security-hardening", domSecurity, "Plover", "Findings from the last penetration test and the roadmap to ISO 27001."},
	{"API Platform", "api-platform", domBackend, "Avocet", "Public REST and GraphQL APIs, webhooks and the developer portal."},
	{"Support Desk", "support-desk", domSupport, "Bittern", "Tooling and processes for first- and second-level support."},
	{"Analytics Dashboard", "analytics-dashboard", domData, "Dunlin", "Self-service dashboards for sales, finance and product."},
	{"Cloud Migration", "cloud-migration", domInfra, "Egret", "Moving the remaining on-premise workloads into the cloud before the data centre contract ends."},
	{"Invoicing Automation", "invoicing-automation", domBilling, "Fulmar", "Automatic e-invoices, dunning and the accounting export."},
	{"Recruiting Pipeline", "recruiting-pipeline", domHR, "Gannet", "Job postings, interview loops and offers for all open positions."},
	{"Brand Refresh 2025", "brand-refresh-2025", domMarketing, "Hoopoe", "New logo, colours and tone of voice, rolled out across every channel."},
	{"GDPR Programme", "gdpr-programme", domLegal, "Ibis", "Records of processing, deletion concepts and data subject requests."},
	{"Design System", "design-system", domFrontend, "Jackdaw", "Shared components, tokens and accessibility guidelines for all web products."},
	{"Observability", "observability", domInfra, "Kittiwake", "Metrics, logs and traces for every service, with alerts people trust."},
	{"Partner Integrations", "partner-integrations", domBackend, "Linnet", "Connectors and webhooks for resellers, marketplaces and ERP systems."},
	{"Field Service App", "field-service-app", domMobile, "Merlin", "Offline-first app for technicians on site."},
	{"Finance Reporting", "finance-reporting", domFinance, "Nuthatch", "Month-end close, board reporting and the rolling forecast."},
	{"Vendor Management", "vendor-management", domLegal, "Oriole", "Vendor contracts, renewals and security assessments."},
	{"Customer Success", "customer-success", domSupport, "Pipit", "Onboarding, health scores and renewals for key accounts."},
	{"Machine Learning Lab", "ml-lab", domResearch, "Redstart", "Experiments with ranking, forecasting and document classification."},
	{"Office Move Kraków", "office-move-krakow", domHR, "Siskin", "Moving the Kraków team into the new office on ulica Długa by the end of the quarter."},
	{"Internationalisation", "i18n", domFrontend, "Tern", "Translations, locale formats and right-to-left support for the web products."},
	{"Trade Fair Düsseldorf", "trade-fair-dusseldorf", domMarketing, "Warbler", "Booth, talks and lead capture for the trade fair in Düsseldorf."},
	{"Search Experience", "search-experience", domBackend, "Waxwing", "Better search across products, help centre and documentation."},
	{"Security Operations", "security-operations", domSecurity, "Whimbrel", "Detection rules, incident response and the access reviews."},
	{"Data Governance", "data-governance", domData, "Godwit", "Ownership, catalogue and quality rules for the company's data."},
}

// spareCodenames name projects beyond projectSpecs. None of them occurs in
// any other list, so a codename finds exactly its project's texts.
var spareCodenames = []string{"Shearwater", "Skylark", "Yellowhammer", "Goldcrest", "Firecrest", "Stonechat",
	"Whinchat", "Treecreeper", "Dipper", "Crossbill", "Bullfinch", "Chiffchaff", "Wheatear", "Redpoll", "Twite"}

// phaseSuffixes distinguish repeated project names when more projects are
// requested than projectSpecs holds.
var phaseSuffixes = []string{"Phase 2", "Phase 3", "EMEA", "Americas", "APAC", "Pilot", "Next", "Legacy"}

// Names of people. Many carry diacritics on purpose: logins are ASCII folds
// of them, and search must match both spellings.
var firstNames = []string{"Łukasz", "José", "Søren", "Zoë", "François", "Jürgen", "Björn", "Chloé", "Hélène",
	"Agnès", "Renée", "Noël", "Zoltán", "Ágnes", "Bálint", "Jiří", "Tomáš", "Kateřina", "Małgorzata", "Wojciech",
	"Paweł", "Żaneta", "Øystein", "Åsa", "Maëlle", "Anaïs", "Inês", "João", "Sebastián", "Ramón", "Begoña",
	"Íñigo", "Ólafur", "Þóra", "Ömer", "Çağla", "Şebnem", "Ștefan", "Miloš", "Đorđe", "Thảo",
	"Jan", "Anna", "Maria", "Thomas", "Sarah", "David", "Emma", "Liam", "Olivia", "Noah", "Mia", "Lena",
	"Felix", "Hannah", "Max", "Laura", "Priya", "Arjun", "Wei", "Mei", "Kenji", "Aiko", "Fatima", "Omar",
	"Amara", "Kwame", "Ingrid", "Henrik", "Siobhan", "Niamh", "Pedro", "Lucía", "Giulia", "Matteo", "Yusuf",
	"Elif", "Nikolai", "Svetlana", "Ivana", "Grace", "Samuel", "Leon", "Clara", "Emil", "Frida", "Oskar"}

var lastNames = []string{"Müller", "Schröder", "Dvořák", "Ångström", "Çelik", "Øvergaard", "Nowak", "Kowalski",
	"Wiśniewski", "Wójcik", "Novák", "Svoboda", "Černý", "Procházka", "Kovács", "Szabó", "Nagy", "Tóth",
	"Fernández", "García", "Muñoz", "Peña", "Gonçalves", "Magalhães", "Lefèvre", "Dubois", "Girard",
	"Lemaître", "Sørensen", "Jørgensen", "Håkansson", "Öberg", "Lindqvist", "Söderberg", "Virtanen",
	"Mäkinen", "Järvinen", "Gunnarsdóttir", "Þórsson", "Yılmaz", "Öztürk", "Şahin", "Popescu", "Jovanović",
	"Petrović", "Horvat", "Nguyễn", "Trần", "Tanaka", "Sato", "Kim", "Park", "Patel", "Sharma", "O'Brien",
	"McAllister", "Smith", "Johnson", "Fischer", "Weber", "Becker", "Hoffmann", "Schäfer", "Köhler", "Groß",
	"Weiß", "König", "Brännström", "Ødegård", "Rossi", "Bianchi", "Costa", "Silva", "Haddad", "Okafor",
	"Mensah", "Ivanova", "Kuznetsov", "Walsh", "Murphy", "Andersen", "Larsen", "de Vries", "van Dijk"}

// accentedLastNames is the subset of lastNames with diacritics; every other
// generated user takes one, so even small data sets contain some.
var accentedLastNames = []string{"Müller", "Schröder", "Dvořák", "Ångström", "Çelik", "Øvergaard", "Wiśniewski",
	"Wójcik", "Novák", "Černý", "Procházka", "Kovács", "Szabó", "Tóth", "Fernández", "García", "Muñoz", "Peña",
	"Gonçalves", "Lefèvre", "Lemaître", "Sørensen", "Håkansson", "Öberg", "Söderberg", "Mäkinen", "Järvinen",
	"Gunnarsdóttir", "Þórsson", "Yılmaz", "Öztürk", "Şahin", "Jovanović", "Nguyễn", "Schäfer", "Köhler", "Groß",
	"Weiß", "König", "Brännström", "Ødegård"}

var languages = []string{"en", "en", "en", "de", "de", "fr", "pl", "es", "sv", "cs"}

// General project-management nouns, shared by every domain.
var generalNouns = []string{"deadline", "milestone", "stakeholder", "budget", "roadmap", "dependency", "estimate",
	"handover", "scope", "backlog", "sprint goal", "retrospective", "requirement", "specification",
	"acceptance criterion", "risk", "blocker", "workaround", "rollout", "rollback plan", "release", "hotfix",
	"regression", "changelog", "sign-off", "kickoff", "review", "approval", "escalation", "capacity",
	"timeline", "deliverable", "proposal", "trade-off", "assumption", "constraint", "follow-up", "action item",
	"decision log", "guideline", "template", "checklist", "documentation", "training", "feedback round",
	"pilot", "prototype", "proof of concept", "baseline", "metric", "KPI", "OKR", "audit", "governance",
	"contract", "licence", "renewal", "migration", "upgrade", "deprecation", "integration", "workshop", "demo",
	"presentation", "announcement", "FAQ", "handbook", "playbook", "definition of done", "owner",
	"communication plan", "status report", "steering committee", "go-live", "cutover", "freeze", "buffer",
	"quick win", "technical debt", "spike", "post-mortem", "lessons learned", "ticket", "budget request"}

var verbs = []string{"add", "remove", "update", "migrate", "refactor", "rename", "deprecate", "document", "validate",
	"verify", "investigate", "reproduce", "fix", "patch", "upgrade", "configure", "deploy", "roll out", "roll back",
	"monitor", "cache", "index", "reindex", "paginate", "export", "import", "sync", "archive", "restore",
	"back up", "encrypt", "rotate", "revoke", "approve", "review", "audit", "translate", "localise", "test",
	"benchmark", "profile", "optimise", "simplify", "consolidate", "split", "merge", "clean up", "automate",
	"schedule", "throttle", "retry", "debounce", "batch", "stream", "aggregate", "normalise", "deduplicate",
	"anonymise", "redact", "notify", "escalate", "onboard", "offboard", "train", "negotiate", "renew", "draft",
	"publish", "announce", "present", "prioritise", "estimate", "plan", "track", "measure", "forecast",
	"reconcile", "refund", "tag", "categorise", "prune", "compress", "resize", "render", "prefetch", "bundle",
	"lint", "provision", "decommission", "scale", "shard", "replicate", "snapshot", "instrument", "trace",
	"parse", "serialise", "expose", "hide", "disable", "enable", "toggle", "pin", "bump", "revert", "backport",
	"harden", "sanitise", "hash", "clarify", "align", "kick off", "wrap up", "sunset", "unblock", "pre-fill",
	"reorder", "simulate", "sign", "hand over", "collect", "compare", "evaluate", "shortlist", "consolidate",
	"rebuild", "reconfigure", "whitelist", "greylist", "dry-run", "stage", "promote", "freeze", "thaw"}

var adjectives = []string{"stale", "flaky", "slow", "broken", "missing", "duplicate", "inconsistent", "outdated",
	"legacy", "deprecated", "mandatory", "optional", "intermittent", "sporadic", "critical", "minor", "cosmetic",
	"blank", "empty", "corrupted", "truncated", "misaligned", "unreadable", "localised", "responsive",
	"accessible", "redundant", "orphaned", "encrypted", "unencrypted", "expired", "invalid", "malformed",
	"unexpected", "silent", "noisy", "verbose", "overlapping", "cached", "paginated", "nested", "archived",
	"draft", "public", "internal", "external", "quarterly", "monthly", "weekly", "nightly", "hourly", "manual",
	"automated", "incremental", "partial", "bulk", "idempotent", "transactional", "asynchronous", "synchronous",
	"read-only", "multi-tenant", "regional", "global", "mobile-first", "high-contrast", "keyboard-only",
	"GDPR-compliant", "audit-ready", "cost-efficient", "scalable", "resilient", "lightweight", "zero-downtime",
	"backwards-compatible", "breaking", "experimental", "beta", "stable", "upcoming", "overdue", "blocked",
	"pending", "approved", "unassigned", "urgent", "long-running", "ephemeral", "persistent", "configurable",
	"hard-coded", "case-sensitive", "case-insensitive", "multilingual", "timezone-aware", "self-service",
	"white-label", "retroactive", "granular", "coarse", "hidden", "visible", "sticky", "greyed-out",
	"half-finished", "undocumented", "unowned", "unused", "oversized", "undersized", "misleading", "ambiguous"}

var adverbs = []string{"intermittently", "silently", "occasionally", "always", "sometimes", "only on Mondays",
	"after midnight", "under load", "right after deploys", "in Safari only", "for new accounts only",
	"since the last release", "for about a third of the users", "when the cache is cold", "randomly"}

// failures complete "<component> ..." in bug subjects.
var failures = []string{"fails with 500", "times out", "hangs", "crashes", "returns 404", "returns an empty list",
	"shows stale data", "double-counts entries", "drops events", "leaks memory", "ignores the locale",
	"sends duplicate emails", "rounds amounts wrongly", "loses the selection", "breaks the layout",
	"logs the password in clear text", "rejects valid input", "accepts invalid input", "shows the wrong currency",
	"uses the wrong timezone", "blocks the UI thread", "fails silently", "retries forever", "deadlocks",
	"returns 502 behind the proxy", "exceeds the rate limit", "shows a blank page", "skips the last page",
	"sorts umlauts wrongly", "truncates long names", "overwrites concurrent edits"}

// conditions complete "... when <condition>".
var conditions = []string{"password contains an umlaut", "the name contains an apostrophe", "the file is larger than 2 GB",
	"two users edit at the same time", "the session expires", "the user switches language", "the list has more than 1000 entries",
	"the browser is offline", "the clock changes to daylight saving time", "the CSV has a BOM", "the amount is negative",
	"the email address has a plus sign", "the project is archived", "the cache is cold", "the VPN reconnects",
	"the title contains an emoji", "the date is 29 February", "the request is retried", "the token is refreshed",
	"the user has no avatar", "the upload is cancelled", "the filter is empty", "the tenant was migrated",
	"the invoice has zero line items", "JavaScript is disabled", "the screen reader is active", "the window is resized",
	"the import contains duplicates", "the address has no postcode", "the server runs in UTC+14"}

var techs = []string{"PostgreSQL 16", "Postgres", "MySQL 8", "Redis", "Kafka", "RabbitMQ", "Elasticsearch", "OpenSearch",
	"Kubernetes", "Helm", "Terraform", "Ansible", "Docker", "nginx", "HAProxy", "Envoy", "Grafana", "Prometheus",
	"Loki", "Jaeger", "OpenTelemetry", "Vault", "Consul", "GitLab CI", "GitHub Actions", "Jenkins", "Argo CD",
	"S3", "MinIO", "Cloudflare", "Let's Encrypt", "React", "Vue", "Angular", "TypeScript", "webpack", "Vite",
	"Storybook", "Tailwind", "Next.js", "Django", "Rails", "Spring Boot", "Go", "Rust", "Python 3.12", "Node.js 22",
	"Java 21", "Kotlin", "SwiftUI", "Flutter", "Firebase", "Airflow", "dbt", "Spark", "Snowflake", "BigQuery",
	"Metabase", "Superset", "Looker", "Jupyter", "pandas", "Salesforce", "HubSpot", "Mailchimp", "Zendesk",
	"Confluence", "Slack", "SAP", "DATEV", "Personio", "DocuSign", "Keycloak", "LDAP", "SAML", "Okta", "WireGuard",
	"ClickHouse", "DuckDB", "Debezium", "Temporal", "gRPC", "Protobuf", "SQLite", "Playwright", "Cypress",
	"Lighthouse", "Figma", "Matomo", "Plausible", "Sendgrid", "Twilio", "Auth0", "Hetzner", "OVHcloud", "AWS",
	"Azure", "GCP", "Ceph", "ZFS", "systemd", "Debian 12", "Ubuntu 24.04", "Alpine", "Caddy", "Traefik"}

// vendors are companies people negotiate with.
var vendors = []string{"Stripe", "Adyen", "PayPal", "Klarna", "Mollie", "DATEV", "Personio", "Workday", "Salesforce",
	"HubSpot", "Atlassian", "Microsoft", "Google", "Hetzner", "IONOS", "Telekom", "Vodafone", "DHL", "Deutsche Bahn",
	"Lufthansa", "Regus", "Bechtle", "Cancom", "Accenture", "Deloitte", "KPMG", "PwC", "Taylor Wessing", "Gleiss Lutz",
	"Allianz", "Commerzbank", "Sparkasse", "ING", "Revolut", "Wise"}

var cities = []string{"Berlin", "Hamburg", "München", "Köln", "Düsseldorf", "Zürich", "Wien", "Kraków", "Wrocław",
	"Gdańsk", "Praha", "Brno", "Malmö", "Göteborg", "København", "Århus", "Oslo", "Tromsø", "Helsinki", "Tallinn",
	"Lisboa", "São Paulo", "Montréal", "Reykjavík", "Łódź", "Poznań", "İstanbul", "Ljubljana", "Bratislava",
	"Besançon", "Orléans", "Córdoba", "Málaga", "Amsterdam", "Rotterdam", "Antwerpen", "Lyon", "Nantes", "Dublin",
	"Tokyo", "Toronto", "Barcelona", "Milano", "Bologna", "Leipzig", "Dresden", "Nürnberg", "Genève"}

var browsers = []string{"Firefox 128 ESR", "Firefox 133", "Chrome 131", "Chrome 126", "Safari 17.5", "Safari 18.1",
	"Edge 131", "Samsung Internet 26", "Opera 114", "Chrome on Android 14", "Safari on iOS 17.6", "Brave 1.73"}

var systems = []string{"Windows 11", "Windows 10", "macOS 14.6", "macOS 15.1", "Ubuntu 22.04", "Ubuntu 24.04",
	"Fedora 41", "iOS 17.6", "iOS 18.1", "Android 13", "Android 14", "ChromeOS 130", "Debian 12"}

var environments = []string{"production", "staging", "QA", "the sandbox", "the demo instance", "preview", "dev"}

var regions = []string{"eu-central-1", "eu-west-1", "eu-north-1", "us-east-1", "fsn1", "nbg1", "hel1", "ap-southeast-2"}

var envShort = []string{"prod", "staging", "qa", "dev", "sandbox", "preview"}

var hostDomains = []string{"internal", "example.net", "corp.example.com", "svc.cluster.local", "eu.example.io"}

// errorCodes are real-looking error codes and exception names.
var errorCodes = []string{"ERR_TLS_CERT_EXPIRED", "ERR_CONNECTION_RESET", "ECONNREFUSED", "ETIMEDOUT", "ENOSPC",
	"EACCES", "ERR_INVALID_ARG_TYPE", "ERR_HTTP2_STREAM_CANCEL", "ORA-00942", "SQLSTATE 23505", "SQLSTATE 40001",
	"PG::UniqueViolation", "HTTP 502 Bad Gateway", "HTTP 429 Too Many Requests", "E_INVOICE_TOTAL_MISMATCH",
	"PAYMENT_DECLINED_51", "CARD_EXPIRED", "OOMKilled", "CrashLoopBackOff", "ImagePullBackOff", "NXDOMAIN",
	"SSL_ERROR_SYSCALL", "java.lang.NullPointerException", "java.lang.IllegalStateException",
	"TypeError: Cannot read properties of undefined", "KeyError", "UnicodeDecodeError", "ValueError",
	"context deadline exceeded", "0x80070005", "ERR_NAME_NOT_RESOLVED", "ERR_CERT_AUTHORITY_INVALID", "SIGSEGV",
	"EPIPE", "ERR_TOO_MANY_REDIRECTS", "AUTH_TOKEN_EXPIRED", "QUOTA_EXCEEDED", "SCHEMA_VALIDATION_FAILED",
	"ERR_DUPLICATE_IBAN", "ActiveRecord::StaleObjectError", "Errno::ENOENT", "deadlock detected",
	"could not serialize access due to concurrent update", "too many open files", "x509: certificate signed by unknown authority",
	"413 Request Entity Too Large", "ERR_BLOCKED_BY_CLIENT", "NS_ERROR_NET_RESET", "MISCONF Redis is configured to save RDB snapshots"}

// errorStates end generated error codes: ERR_<ROOT>_<STATE>.
var errorStates = []string{"LOCKED", "NOT_FOUND", "EXPIRED", "INVALID", "CONFLICT", "TIMEOUT", "MISSING",
	"DUPLICATE", "OVERFLOW", "UNAVAILABLE", "FORBIDDEN", "MISMATCH"}

// identPrefixes start generated camelCase identifiers.
var identPrefixes = []string{"get", "set", "load", "fetch", "build", "parse", "validate", "handle", "compute",
	"sync", "resolve", "render", "create", "delete", "find", "update", "map", "to", "format", "normalize", "apply", "emit"}

var identSuffixes = []string{"", "", "", "Profile", "List", "ById", "Batch", "Async", "Config", "State", "Summary",
	"Count", "Total", "Status", "Handler", "Dto", "Payload", "Options", "Cache", "Index"}

var snakeSuffixes = []string{"id", "at", "count", "status", "total", "key", "ref", "version", "type", "flags", "hash", "url"}

var fileExts = []string{".go", ".ts", ".tsx", ".rb", ".py", ".java", ".kt", ".swift", ".sql", ".yaml", ".vue"}

var srcDirs = []string{"src", "app", "lib", "internal", "pkg", "services", "web/src", "cmd"}

var quarters = []string{"Q1", "Q2", "Q3", "Q4"}

var weekdays = []string{"Monday", "Tuesday", "Wednesday", "Thursday", "Friday"}

var months = []string{"January", "February", "March", "April", "May", "June", "July", "August", "September",
	"October", "November", "December"}

// benefits complete user stories: "so that <benefit>".
var benefits = []string{"I do not have to ask support", "I can finish my work offline", "I save time every week",
	"our numbers match the accounting", "nobody sees data they should not", "I can plan the next sprint",
	"the auditors are happy", "I find things faster", "I do not miss a deadline", "customers pay on time",
	"the team knows what changed", "I can work from my phone", "new colleagues get started on day one",
	"we stay within budget", "the page loads quickly on a train", "I understand why it failed",
	"I can prove consent", "we can answer the customer within the SLA"}

// Comment-only vocabulary. Nothing outside comment templates draws from
// these lists, so their words occur in work package comments but never in a
// subject or description: a search finds those work packages only through
// their comments. Keep these words out of every other list.
var (
	commentTools = []string{"tcpdump", "strace", "pprof", "flamegraph", "Wireshark", "heaptrack", "valgrind",
		"bpftrace", "jstack", "mitmproxy", "ltrace", "lsof", "iostat", "vmstat", "dtrace", "gdb", "Perfetto",
		"hyperfine", "Vegeta", "Locust", "jmeter", "Sentry", "Honeycomb", "pgBadger", "pgcli"}

	rootCauses = []string{"a missing index on {sn}", "clock skew of {num} seconds between the nodes",
		"an expired intermediate certificate on {h}", "a race between the cache refresh and the write path",
		"the connection pool being capped at {num}", "an off-by-one in the pagination cursor",
		"a stale DNS entry that survived the failover", "the cron job running twice after the DST switch",
		"a memory leak in the thumbnailer", "a leap-year bug in the date parser",
		"the health check timing out after {num} seconds", "NFD-normalised umlauts coming from macOS clients",
		"logrotate not running, so /var filled up", "a retry storm from the mobile clients",
		"a thundering herd after the cache expired", "the feature flag defaulting to on",
		"a TTL of 0 in the Helm values", "a dangling lock left behind by a killed worker",
		"the proxy buffering responses larger than 1 MiB", "a Latin-1 export from the legacy ERP",
		"an integer overflow in {id}", "a misconfigured MTU of 1400 on the tunnel",
		"the batch size being read from the wrong environment variable", "a forgotten debug breakpoint in {path}",
		"a vendor API change that was announced only in their newsletter", "a transaction left open by the importer",
		"a regex with catastrophic backtracking", "lazy loading inside a loop (classic N+1)",
		"a copy-paste error in the tax table for Austria", "daylight saving time in the Sydney office"}

	vendorTicketPrefixes = []string{"CASE-", "SR-", "INC", "TKT-", "SUP-", "REQ-"}
)

// Subject templates per work package type. Slots draw from the project's
// domain unless noted otherwise.
var (
	bugSubjects = []string{
		"Login fails with 500 when password contains {umlaut|an emoji|a trailing space|ß}",
		"{c} {fail} when {cond}",
		"{c} {fail} {adv}",
		"{N} {fail} on {s}",
		"{e} on {h} after upgrade to {ver}",
		"{e} in {c} {adv}",
		"{s}: {n} is {a}",
		"{s} shows {a} {n} for {r}s",
		"{N} {fail} for {r}s in {city}",
		"Regression in {ver}: {n} {fail}",
		"{id}() throws {e}",
		"{N} not saved when {cond}",
		"{s} {fail} in {browser}",
		"Wrong {n} in {s} {adv}",
		"{N} and {n} out of sync after {v|import|migration|failover}",
		"{c}: {e} when {cond}",
		"Cannot {v} {n} on {s}",
		"Duplicate {n} created when {cond}",
		"{N} missing from {s} since {ver}",
		"Column {sn} is {null|empty|zero} for {a} {n}",
		"Timeout in {c} while calling {t}",
		"Memory usage of {c} grows to {num} GB",
		"{s} unusable on {os}",
		"Sorting by {n} ignores {umlauts|accents|case}",
		"{N} {fail} after {t} update",
	}
	featureSubjects = []string{
		"Allow {r}s to {v} {n}",
		"Support {a} {n} in {s}",
		"{V} {n} {automatically|in bulk|per tenant|from the API|on a schedule}",
		"Add {n} to {s}",
		"Show {n} on {s}",
		"Export {n} as {CSV|Excel|PDF|JSON}",
		"Integrate {t} for {n}",
		"{A} {n} for {r}s",
		"Notify {r}s when {n} is {a}",
		"New {s} for {r}s",
		"Filter {s} by {n}",
		"Make {n} {configurable|optional|mandatory|searchable|exportable}",
		"Self-service {n} for {r}s",
		"Bulk {v} of {n}",
		"Dark mode for {s}",
		"Offer {n} in {German|French|Polish|Spanish|Swedish|Czech}",
		"Connect {c} to {t}",
	}
	taskSubjects = []string{
		"{V} {n}",
		"{V} {n} in {c}",
		"{V} {a} {n}",
		"{V} {n} before {g}",
		"Upgrade {t} to {ver}",
		"Clean up {a} {n} in {s}",
		"Write {documentation|a runbook|a how-to|an FAQ} for {n}",
		"Prepare {g} for {proj}",
		"Review {n} with {r}s",
		"{V} the {g} for {q}",
		"Ask {vendor} about {n}",
		"Schedule {g} with {u}",
		"Rotate {n} on {h}",
		"Remove {a} {n} from {s}",
		"Set up {t} for {c}",
		"Update {s} for {ver}",
		"{V} and {v} {n}",
		"Check {n} for {city} office",
		"Move {n} from {t} to {t}",
		"Collect feedback on {s}",
	}
	epicSubjects = []string{
		"{N} overhaul",
		"{A} {n} for {q}",
		"Rebuild {s}",
		"Migrate {c} to {t}",
		"{N} programme {q}",
		"Everything about {n}",
		"{N} 2.0",
		"Replace {t} with {t}",
		"{G} for {proj}",
	}
	milestoneSubjects = []string{
		"{G}: {proj} {ver}",
		"{N} live in {city}",
		"Go-live {s}",
		"{q} release",
		"Code freeze {ver}",
		"Sign-off {n}",
		"{G} {date}",
		"Launch of {s}",
	}
	storySubjects = []string{
		"As a {r} I want to {v} {n}",
		"As a {r} I want a {faster|simpler|clearer|searchable|printable} {n}",
		"{R} can {v} {n} from {s}",
		"{R} sees {n} on {s}",
		"As a {r} I want to find {n} quickly",
	}
)

// sentences are the building blocks of description paragraphs.
var sentences = []string{
	"The {n} in {c} is {a} and needs to be {done|reworked|replaced|documented} before {g}.",
	"{R}s reported that {s} {fail} {adv}.",
	"We currently {v} the {n} by hand, which takes about {num} minutes per {day|week|release}.",
	"This blocks the {g} planned for {q}.",
	"See {wp} for the {g} and {wp} for the related {n}.",
	"The {a} {n} was introduced in {ver} together with the {x}.",
	"Until this is fixed, the workaround is to {v} the {n} manually on {h}.",
	"{t} already supports this, so the change in {c} should be small.",
	"The {r} team asked for this in the last {g}.",
	"Without this we cannot {v} the {x} in time for the {g}.",
	"Affected are roughly {pct} of all {n} records in {env}.",
	"The {n} must stay {a}; legal confirmed this in {month}.",
	"Please keep {id} backwards compatible because {c} still calls it.",
	"The config key `{cfg}` controls this and defaults to `{true|false|0|30s|100}`.",
	"Latency of {c} went from {ms} to {ms} after the change.",
	"We expect about {big} {n} entries per {day|month|quarter}.",
	"The data lives in the `{sn}` table and is exported {nightly|hourly|weekly} to {t}.",
	"{u} knows the history of the {n} and should review the change.",
	"It is unclear whether the {x} is affected as well.",
	"Make sure the {n} is {a} for {r}s in {city} too.",
	"The {a} {n} confuses {r}s, judging from {num} support tickets this {month|quarter|week}.",
	"Budget for this comes from the {g} line of {proj}.",
	"The {s} already has a placeholder for the {n}.",
	"A quick spike showed that {t} can {v} the {n} without changes to {c}.",
	"{T} is configured differently in {env} and {env}, which explains part of the confusion.",
	"This is a prerequisite for the {g} and must be done before {date}.",
	"Ideally, {r}s should not notice the {g} at all.",
	"Costs are estimated at {cur} per {month|year}.",
	"The {x} team depends on this; coordinate with them before merging.",
	"Do not {v} the {n} in {env} without a {g}.",
	"The old {n} is {a} and will be removed in {ver}.",
	"Logs on {h} show `{e}` roughly every {num} minutes.",
	"{R}s in {city} and {city} are the most affected.",
	"Translations are missing for {German|French|Polish|Czech|Swedish|Spanish}.",
	"The contract with {vendor} ends on {date}, so this has a hard deadline.",
	"We agreed to {v} the {n} first and the {x} later.",
	"Nothing changes for {r}s who do not use the {n}.",
	"Numbers in {s} and in {t} differ by {pct}.",
	"There is an open question about who owns the {n} after the {g}.",
	"Everything related to the {x} is out of scope here.",
}

// bugSteps are the numbered steps of a bug report.
var bugSteps = []string{
	"Log in as a {r} on {h}",
	"Open the {s}",
	"{V} the {n}",
	"Enter `{big}` into the {n} field",
	"Click \"{Save|Submit|Export|Continue|Apply}\"",
	"Switch the language to {German|French|Polish|Turkish}",
	"Wait {num} seconds",
	"Reload the page",
	"Open the same {n} in a second tab",
	"Upload `{sn}.{csv|xlsx|pdf|png}`",
	"Call `{GET|POST|PATCH|DELETE} /api/v{1|2|3}/{sn}` with an {a} payload",
	"Select {num} {n} entries and choose \"{V}\"",
	"Disconnect from the network",
	"Run `{c} {v|sync|import|export} --tenant {num}`",
}

// expectations and observed behaviour of bug reports.
var bugExpected = []string{
	"The {n} is saved and {r}s see it on the {s}.",
	"The {s} shows the {a} {n}.",
	"The request succeeds within {ms}.",
	"A helpful error message explains what is wrong with the {n}.",
	"Nothing happens to the {x}.",
	"The export contains all {big} rows.",
}

var bugActual = []string{
	"The request fails with `{e}`.",
	"{C} answers with {500|502|503|504} after {ms}.",
	"The {s} shows a {a} {n}.",
	"Nothing happens; the browser console shows `{e}`.",
	"The {n} is duplicated.",
	"The page freezes for about {num} seconds, then shows `{e}`.",
	"Only {pct} of the rows arrive in {t}.",
	"The {n} is silently dropped.",
}

// acceptance lists the items of acceptance-criteria checklists.
var acceptance = []string{
	"{R}s can {v} the {n} from the {s}",
	"The {n} is {a} by default",
	"Existing {n} entries are migrated",
	"The change is documented in the {s}",
	"An audit entry is written for every change to the {n}",
	"Works with {browser} and {browser}",
	"Works on {os}",
	"p95 latency of {c} stays below {ms}",
	"Translations exist for all supported languages",
	"Feature flag `{cfg}` can switch it off",
	"Tests cover the {a} case",
	"The {x} is not affected",
	"Screen readers announce the {n}",
	"The {g} is updated",
	"Old {n} entries are {archived|deleted|kept} after {num} days",
}

// taskItems are checklist items of tasks.
var taskItems = []string{
	"{V} the {n}",
	"{V} the {n} in {env}",
	"Ask {u} about the {n}",
	"Update the {s}",
	"Write the {g}",
	"Inform {r}s",
	"{V} `{id}`",
	"Drop the `{sn}` column",
	"Run the migration on {h}",
	"Check the numbers with {t}",
	"Get sign-off from {u}",
	"Book a slot for the {g}",
	"Send the {n} to {vendor}",
	"Archive the old {n}",
}

// decisions record choices in descriptions, wiki pages and meeting outcomes.
var decisions = []string{
	"We go with {t} instead of {t} because {it is cheaper|the team knows it|it is already in use in {proj}|it has better support for {n}}.",
	"The {n} stays {a} until {q}.",
	"We postpone the {g} to {q}.",
	"{u} owns the {n} from now on.",
	"We will not support {n} for {r}s in this release.",
	"The {x} is handled by a separate {g}.",
	"We adopt {t} for the {n}.",
	"Budget of {cur} approved for the {n}.",
	"We keep {c} as it is and only {v} the {n}.",
	"The {g} moves to {date}.",
}

// commentTemplates are whole comments; commentFacts are appended to some of
// them. Both may use the comment-only slots {ct}, {rc} and {vt}.
var commentTemplates = []string{
	"{@} can you check the {env} logs? I see `{e}` on {h}.",
	"I can reproduce this on {h}. {V|Bisected|Traced} it with {ct}; it started with {ver}.",
	"Root cause: {rc}. Fix is in review.",
	"We decided to postpone the {migration|rollout|cutover|launch|upgrade} to {q}.",
	"Discussed with {u}: we {v} the {n} first and keep the rest as is.",
	"Is this still relevant after {wp}?",
	"Duplicate of {wp}, closing.",
	"Deployed to {env}, please verify.",
	"Verified in {env}, works for me.",
	"Still happens for {r}s in {city}, reopened.",
	"{@} the numbers from {ct} look fine now: p99 dropped from {ms} to {ms}.",
	"Opened a ticket with {vendor}: {vt}.",
	"{vendor} confirmed the problem in {vt}; a fix is expected by {date}.",
	"I would rather {v} the {n} than {v} the {x}. Opinions?",
	"Estimate: {num} hours, mostly for the {g}.",
	"Blocked by {wp}.",
	"Moved to {q} after the planning meeting.",
	"{@} please review the change to `{path}`.",
	"Took a heap dump with {ct}: {num} MB of {n} objects retained by {id}.",
	"FYI the {s} will be down for maintenance on {date} between 18:00 and 20:00.",
	"Agreed with {r}s: the {n} stays {a}.",
	"Customer {big} reported the same; see {vt}.",
	"The load test with {ct} reached {big} requests per minute before {c} started returning `{e}`.",
	"I traced the slow requests with {ct}; the time is spent in {id}.",
	"Postmortem draft is in the wiki. Short version: {rc}.",
	"+1, this hits us every {day|week|release} in {city}.",
	"{@} {@} any objections to closing this?",
	"Workaround for now: {v} the {n} manually and restart {c}.",
	"Legal signed off on the {n} wording on {date}.",
	"Let's discuss this in the {weekday} sync.",
	"Screenshot attached. The {n} overlaps the {x} at {num}px width.",
	"Fixed in {ver}. The culprit was {rc}.",
	"Note to self: {ct} output is on {h} in /tmp/{sn}.txt.",
	"We spent {cur} on this so far; the budget was {cur}.",
	"{u} says the {n} in {t} was configured by {vendor} back in {month}.",
	"Reverted in {ver} because of {rc}.",
	"Can we get this into the {q} release? {R}s keep asking.",
	"Tested with {browser} on {os}: not reproducible.",
	"The {r} meeting on {weekday} agreed to {v} the {n}.",
	"Closing as won't fix; the {x} replaces this.",
}

var commentFacts = []string{
	"Measured with {ct}.",
	"Incident reference: {vt}.",
	"Root cause was {rc}.",
	"Affected tenants: {num}.",
	"Cost so far: {cur}.",
	"Checked on {h} at {hh}:{mm} UTC.",
	"{u} confirmed by phone.",
	"Next check on {date}.",
}

// detail lines of change journals (Activity without comment).
var changeDetails = []string{
	"Priority changed from Normal to High",
	"Priority changed from High to Immediate",
	"Priority changed from Normal to Low",
	"% Complete changed from 0 to 50",
	"% Complete changed from 50 to 80",
	"Estimated time set to 8.00",
	"Estimated time changed from 4.00 to 12.00",
	"Category set to {N}",
}

// Wiki page titles by kind; kinds select the body layout.
var (
	wikiGuideTitles = []string{"Onboarding Guide", "Coding Guidelines", "Team Charter", "Glossary", "Getting Started",
		"How We Work", "Support Handbook", "Style Guide", "Definition of Done", "Working Agreements", "FAQ",
		"Tooling Overview", "Access and Permissions", "Naming Conventions", "Review Guidelines", "Travel Guide {city}"}
	wikiChecklistTitles = []string{"Release Checklist", "Go-Live Checklist", "Offboarding Checklist",
		"Quarter Close Checklist", "Event Checklist", "Security Review Checklist", "Vendor Onboarding Checklist"}
	wikiRunbookTitles = []string{"On-call Runbook", "How to deploy {c}", "Restoring {c} from backup",
		"Rotating {n}", "Runbook: {c}", "Troubleshooting {s}"}
	adrTopics = []string{"Event Sourcing", "Postgres for Everything", "Monorepo", "GraphQL Gateway", "Feature Flags",
		"Multi-Tenancy Model", "Search Engine Choice", "Outbox Pattern", "API Versioning", "Frontend Framework",
		"Secrets Management", "Background Jobs", "Time Zones in the Database", "Soft Deletes", "Money as Integers"}
)

// wikiSections are paragraph templates for wiki bodies.
var wikiParagraphs = []string{
	"This page describes how we {v} the {n} in {proj}. Ask {u} if something is unclear.",
	"The {s} is the single source of truth for the {n}. Everything else is derived from it.",
	"Before you {v} anything in {env}, check the {g} and tell the {r}s in the channel.",
	"We use {t} for the {n} and {t} for the {x}; the reasons are in the architecture decision records.",
	"The {n} is owned by {u}. The deputy is {u}.",
	"New team members get access to the {s} in their first week.",
	"Keep the {n} {a}. If that is not possible, write down why in the {g}.",
	"Numbers in this section are from {month}; they change every {quarter|month|sprint}.",
	"Our target is to {v} the {n} within {num} {hours|days|minutes}.",
	"Please update this page when you change the `{cfg}` setting.",
	"Questions go to the {r}s in {city}; they cover {weekday} to {weekday}.",
	"If the {s} {fail}, follow the runbook and open an incident.",
}

// Meeting vocabulary.
var (
	meetingSeries = []string{"Sprint Planning {num}", "Sprint Review {num}", "Retrospective", "Architecture Review",
		"Weekly Sync {proj}", "Budget Review {q}", "Backlog Refinement", "Incident Review", "Steering Committee {q}",
		"Release Planning {ver}", "Design Critique", "Daily Stand-up", "All Hands {month}", "Vendor Call {vendor}",
		"Kick-off {proj}", "Quarterly Business Review {q}", "Hiring Sync", "Security Review", "Roadmap Review {q}",
		"Data Council", "Launch Readiness {s}"}
	meetingRooms = []string{"Zoom", "Microsoft Teams", "Google Meet", "Jitsi", "Berlin office, Room Müller",
		"Berlin office, Room Spree", "Hamburg office, Room Elbe", "Kraków office, Room Wisła", "München office, Room Isar",
		"Zürich office, Room Limmat", "Malmö office, Room Öresund", "Lisboa office, Sala Tejo", "Boardroom",
		"Kitchen", "Room 4.12", "Room 2.03 (Ångström)", "Café Schönbrunn", "Tokyo office (東京), Room Fuji", "Phone"}
	agendaTitles = []string{"Status of {n}", "{G} for {proj}", "Open questions about {n}", "Budget for {n}",
		"Risks: {n}", "Demo: {s}", "Feedback from {r}s", "Hiring update", "Incident {date}", "{T} upgrade",
		"Decide on {n}", "Review {g}", "Next steps for {x}", "Any other business", "Action items from last meeting",
		"Metrics review", "Vendor update: {vendor}", "Roadmap {q}", "Dependencies on {x}"}
	agendaNotes = []string{
		"{u} presents the current state of the {n}.",
		"- {V} the {n}\n- {V} the {x}\n- Open: {g}",
		"Background: the {s} {fail} {adv}. See {wp}.",
		"Numbers: {pct} of {n} entries are {a}; target is {pct}.",
		"We need a decision on the {n} before {date}.",
		"Short update, no discussion needed.",
		"Proposal by {u}: {v} the {n} with {t}.",
		"Questions from the {r}s:\n1. Who owns the {n}?\n2. When does the {g} happen?",
	}
	outcomeTemplates = []string{
		"Decision: we adopt {t} for the {n}.",
		"Decision: the {n} stays {a} until {q}.",
		"Decision: we postpone the {g} to {q}.",
		"Action: {uf} to {v} the {n} by {weekday}.",
		"Action: {uf} to draft the {vendor} contract by {weekday}.",
		"Action: {uf} and {uf} to prepare the {g}.",
		"Information: {vendor} raises prices by {pct} from {month}.",
		"Decision: budget of {cur} approved for the {n}.",
		"Agreed: {r}s get access to the {s} in {q}.",
		"Action: {uf} to follow up on {wp}.",
	}
)

// Saved queries offered by the generator.
var queryNames = []string{"Open bugs", "My tasks", "Overdue work packages", "Closed last month",
	"Team backlog", "Milestones", "Unassigned", "High priority", "Epics overview", "Waiting for review"}

// statusExplanations fill Project.StatusExplanation for some projects.
var statusExplanations = []string{"On track. The {g} is scheduled for {date}.",
	"At risk: the {n} is late because of {x} dependencies.", "Off track until the {vendor} contract is signed.",
	"On track, but the {g} needs a decision by {date}.", "Finished scope for {q}; waiting for sign-off."}

// Fragments of generated technical text.
var (
	hostRoles         = []string{"db", "db-replica", "redis", "kafka", "worker", "k8s-node", "lb", "bastion", "build"}
	javaClassSuffixes = []string{"Service", "Controller", "Repository", "Client", "Mapper"}
	logMessages       = []string{"request_id={big} status={500|502|504} duration={ms}",
		"retrying {id} (attempt {num})", "{e}", "connection to {h} lost", "slow query on {sn}: {ms}",
		"queue depth {big}", "{id} returned {null|nil|undefined}"}
	successMetrics = []string{"{pct} fewer support tickets about the {n}", "p95 latency of {c} below {ms}",
		"{R}s rate the {s} at least 4 of 5", "No {a} {n} left in {env}", "Adoption by {pct} of {r}s within {q}"}
	runbookSteps = []string{"Check the {s}", "Log in to `{h}`", "Run `{c} {status|drain|restart|reindex|verify}`",
		"{V} the {n}", "Compare the numbers with {t}", "Tell the {r}s in the incident channel"}
)
