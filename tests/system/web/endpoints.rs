//! A module adds a JSON endpoint from its own code alone: one declaration
//! (path, method, who may call it, OpenAPI description, handler) gives the
//! route, the access decision, the 405 and the OpenAPI entry; a site moves it
//! by the endpoint's name.

use crate::accounts;
use crate::common;

use std::sync::{Arc, LazyLock, OnceLock};

use http::StatusCode;
use serde_json::json;

use bulwark_site::ModuleManifest;
use bulwark_web::{
    Access, Api, Endpoint, Module, Outcome, Problem, RequestCtx, SiteSetup, json_response,
};
use common::*;

/// `GET /api/hello/{name}` greets anyone; `POST` is for editors.
struct Hello;

fn api() -> &'static Api {
    static API: LazyLock<Api> = LazyLock::new(|| {
        Api::new().endpoint(
            Endpoint::new("hello", "/api/hello/{name}")
                .get(
                    Access::Anyone,
                    || json!({
                        "operationId": "hello",
                        "summary": "Greet someone",
                        "parameters": [{"name": "name", "in": "path", "required": true, "schema": {"type": "string"}}],
                        "responses": {"200": {"description": "A greeting"}},
                    }),
                    |req, _| Box::pin(greet(req)),
                )
                .post(
                    Access::Group("editors"),
                    || json!({"operationId": "helloLoudly", "summary": "Greet someone loudly"}),
                    |req, _| Box::pin(greet(req)),
                ),
        )
    });
    &API
}

async fn greet(req: &RequestCtx<'_>) -> Result<Outcome, Problem> {
    let name = req.arg("name").unwrap_or_default();
    if name == "nobody" {
        return Err(Problem::invalid("name", "nobody cannot be greeted"));
    }
    let greeting = req.site.state::<Greeting>().map_or("hello", |g| g.0);
    Ok(Outcome::Response(json_response(
        StatusCode::OK,
        &json!({ "greeting": format!("{greeting} {name}") }),
    )))
}

/// What the module keeps per site for its handler.
#[derive(Clone)]
struct Greeting(&'static str);

impl Module for Hello {
    fn manifest(&self) -> &Arc<ModuleManifest> {
        static MANIFEST: OnceLock<Arc<ModuleManifest>> = OnceLock::new();
        MANIFEST.get_or_init(|| {
            let manifest = ModuleManifest::new("hello", 100, &[], None, None, "")
                .and_then(|m| m.with_endpoints(api().routes()));
            Arc::new(manifest.unwrap())
        })
    }

    fn api(&self) -> Option<&'static Api> {
        Some(api())
    }

    fn setup(&self, site: &mut SiteSetup<'_>) -> Result<(), bulwark_web::ModuleError> {
        site.provide(Greeting("good day"));
        Ok(())
    }
}

fn site(rules: &str) -> String {
    format!("hostname = \"hello.test\"\ndefault = true\nmodules = [\"hello\"]\n{rules}")
}

async fn serve(rules: &str) -> TestServer {
    let mut modules = common::modules();
    modules.push(Arc::new(Hello));
    let toml = site(rules);
    start_with_modules(&[("hello/site.toml", toml.as_str())], |_| {}, modules).await
}

async fn json_call(s: &TestServer, method: &str, path: &str) -> (u16, serde_json::Value) {
    let (status, body, _) =
        accounts::call(s, &accounts::As::Anonymous, method, path, None, None).await;
    (status, body)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_module_declares_an_endpoint_and_the_openapi_document_lists_it() {
    let s = serve("").await;
    let (status, body) = json_call(&s, "GET", "/api/hello/ann").await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["greeting"], "good day ann");

    // Who may call it is decided by the declaration: anonymous may not POST.
    let (status, body) = json_call(&s, "POST", "/api/hello/ann").await;
    assert_eq!(status, 401, "{body}");
    assert_eq!(body["type"], "urn:bulwark:problem:unauthenticated");

    // A handler's problem, with the field it is about.
    let (status, body) = json_call(&s, "GET", "/api/hello/nobody").await;
    assert_eq!(status, 400, "{body}");
    assert_eq!(body["field"], "name");

    // A method it does not declare: 405, as a problem, with Allow.
    let (status, body, headers) = accounts::call(
        &s,
        &accounts::As::Anonymous,
        "DELETE",
        "/api/hello/ann",
        None,
        None,
    )
    .await;
    assert_eq!(status, 405, "{body}");
    assert_eq!(headers["allow"], "HEAD, GET, POST");

    let (_, doc) = json_call(&s, "GET", "/api/openapi.json").await;
    let item = &doc["paths"]["/api/hello/{name}"];
    assert_eq!(item["get"]["operationId"], "hello");
    assert_eq!(item["get"]["x-access"], "anyone");
    assert_eq!(item["post"]["x-access"], "group:editors");
    assert_eq!(
        item["post"]["responses"]["401"]["$ref"],
        "#/components/responses/Unauthorized"
    );
    s.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_site_moves_an_endpoint_by_its_name() {
    let moved =
        "[[dispatch]]\nname = \"hello\"\npath = \"/greet/{name}\"\ncontroller = \"endpoint\"\n";
    let s = serve(moved).await;
    let (status, body) = json_call(&s, "GET", "/greet/bo").await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["greeting"], "good day bo");
    let old = get(s.addr, "hello.test", "/api/hello/bo").await;
    assert_eq!(old.status, 404);
    let (_, doc) = json_call(&s, "GET", "/api/openapi.json").await;
    assert!(doc["paths"]["/greet/{name}"]["get"].is_object(), "{doc}");
    assert!(doc["paths"]["/api/hello/{name}"].is_null());
    s.shutdown().await;
}
