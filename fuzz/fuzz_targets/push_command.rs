//! Commands as browsers send them (`{"op": "subscribe", "topic": ...}`), run by
//! the push module's own command runner for a client of a real hub.
#![no_main]

use std::sync::{Arc, LazyLock};

use bulwark_push::{Hub, OpenAcl, PushConfig};
use libfuzzer_sys::fuzz_target;

static RUNTIME: LazyLock<tokio::runtime::Runtime> = LazyLock::new(|| {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime")
});

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    RUNTIME.block_on(async {
        // A hub per input: nothing one input publishes or subscribes to changes
        // what the next one does, so a crash found replays alone.
        let hub = Hub::new(PushConfig::default(), Arc::new(OpenAcl));
        let client = hub.connect().expect("a client of a fresh hub");
        let reply = bulwark_module_push::run_command(&client, text).await;
        let kind = reply["type"]
            .as_str()
            .unwrap_or_else(|| panic!("no type in {reply}"));
        assert!(
            ["subscribed", "unsubscribed", "published", "error"].contains(&kind),
            "{reply}"
        );
    });
});
