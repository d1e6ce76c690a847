//! Request paths through the starter site's real router (its own rules and those
//! of the modules it enables), and the same input read as a rule's path.
#![no_main]

use std::path::Path;
use std::sync::LazyLock;

use bulwark_site::{DispatchRule, ModuleManifest, RulePattern, SiteRouter, parse_site_config};
use libfuzzer_sys::fuzz_target;

static ROUTER: LazyLock<SiteRouter> = LazyLock::new(|| {
    let text = include_str!("../../sites/default/site.toml");
    let config = parse_site_config(
        Path::new("sites/default/site.toml"),
        text,
        Path::new("sites/default"),
        &["core", "seo", "push", "auth", "mail", "admin", "media", "menu", "redirects", "comments", "forms", "webhooks", "import", "metrics", "backup", "cdn", "acme"],
    )
    .expect("the starter site.toml is valid");
    let mut module_rules = Vec::new();
    for (name, toml) in [
        ("seo", include_str!("../../modules/seo/module.toml")),
        ("push", include_str!("../../modules/push/module.toml")),
        ("auth", include_str!("../../modules/auth/module.toml")),
        ("mail", include_str!("../../modules/mail/module.toml")),
        ("admin", include_str!("../../modules/admin/module.toml")),
        ("media", include_str!("../../modules/media/module.toml")),
        ("menu", include_str!("../../modules/menu/module.toml")),
        ("redirects", include_str!("../../modules/redirects/module.toml")),
        ("comments", include_str!("../../modules/comments/module.toml")),
        ("forms", include_str!("../../modules/forms/module.toml")),
        ("webhooks", include_str!("../../modules/webhooks/module.toml")),
        ("import", include_str!("../../modules/import/module.toml")),
        ("metrics", include_str!("../../modules/metrics/module.toml")),
        ("backup", include_str!("../../modules/backup/module.toml")),
        ("cdn", include_str!("../../modules/cdn/module.toml")),
        ("acme", include_str!("../../modules/acme/module.toml")),
        ("core", include_str!("../../modules/core/module.toml")),
    ] {
        let manifest = ModuleManifest::new(name, 0, &[], None, None, toml)
            .unwrap_or_else(|e| panic!("{name}'s module.toml: {e}"));
        module_rules.extend(manifest.rules);
    }
    SiteRouter::build(&config.rules, &module_rules).expect("the starter rules do not conflict")
});

fuzz_target!(|data: &[u8]| {
    let Ok(input) = std::str::from_utf8(data) else {
        return;
    };
    let router = &*ROUTER;
    if let Some(matched) = router.route(input) {
        assert!(matched.index < router.rules().len());
        assert_eq!(matched.rule, &router.rules()[matched.index]);
        // Reverse routing takes back what routing gave, and that path routes.
        let url = router
            .url_for(&matched.rule.name, &[], &matched.args)
            .unwrap_or_else(|e| panic!("{input:?} matched, but url_for: {e}"));
        assert!(
            router.route(&url).is_some(),
            "{input:?} -> {url:?} routes nowhere"
        );
    }
    if let Ok(pattern) = RulePattern::parse(input) {
        let rule = DispatchRule {
            name: "fuzzed".into(),
            pattern,
            controller: bulwark_site::Controller::Lib,
        };
        if let Ok(alone) = SiteRouter::build(std::slice::from_ref(&rule), &[]) {
            let _ = alone.route(input);
            let _ = alone.url_for("fuzzed", &["x".into()], &[]);
        }
        // A site's rules win over a module's: the fuzzed rule as a module rule is
        // left out on a conflict, never an error.
        SiteRouter::build(&[], &[rule]).expect("module rules never conflict");
    }
});
