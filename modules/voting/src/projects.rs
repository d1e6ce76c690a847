//! The projects voters choose from: resources of category `project`, one
//! subcategory per theme (what the site's filter searches), and, for the
//! example site, twelve of them.
//!
//! Several nodes may open a new database at once: each step here is one
//! transaction that either happens or finds it already done (a unique name
//! another node took first).

use bulwark_store::{NewResource, Props, Store, StoreError, translated};

/// The category of every project (and the parent of the themes).
pub const PROJECT_CATEGORY: &str = "project";

/// The themes: (category name, Dutch title, English title).
pub const THEMES: [(&str, &str, &str); 4] = [
    ("project_nature", "Natuur", "Nature"),
    ("project_culture", "Cultuur", "Culture"),
    ("project_care", "Zorg", "Care"),
    ("project_sport", "Sport", "Sport"),
];

/// `Ok` also when another node made it first.
fn done_or_taken<T>(result: Result<T, StoreError>) -> Result<(), StoreError> {
    match result {
        Ok(_) | Err(StoreError::Duplicate(_)) => Ok(()),
        Err(e) => Err(e),
    }
}

pub(crate) fn create_categories(store: &Store) -> Result<(), StoreError> {
    if store.category(PROJECT_CATEGORY).is_err() {
        done_or_taken(store.create_category(PROJECT_CATEGORY, Some("text"), "Project"))?;
    }
    for (name, nl, en) in THEMES {
        if store.category(name).is_err() {
            done_or_taken(store.create_category(
                name,
                Some(PROJECT_CATEGORY),
                &format!("{nl} / {en}"),
            ))?;
        }
    }
    Ok(())
}

/// (Dutch title, English title, Dutch summary, English summary) per theme.
const DEMO: [[(&str, &str, &str, &str); 3]; 4] = [
    [
        (
            "Bijen in de stad",
            "Bees in the city",
            "Bloemen en bijenkasten op daken in tien steden.",
            "Flowers and beehives on roofs in ten cities.",
        ),
        (
            "Schone rivieren",
            "Clean rivers",
            "Vrijwilligers halen plastic uit Maas en Waal.",
            "Volunteers take plastic out of the Meuse and the Waal.",
        ),
        (
            "Een bos per dorp",
            "A wood for every village",
            "Elk dorp plant een hectare bos.",
            "Every village plants a hectare of woodland.",
        ),
    ],
    [
        (
            "Muziekles voor ieder kind",
            "Music lessons for every child",
            "Een instrument en een docent op elke basisschool.",
            "An instrument and a teacher in every primary school.",
        ),
        (
            "Het open atelier",
            "The open studio",
            "Kunstenaars werken een jaar lang in de bibliotheek.",
            "Artists work in the public library for a year.",
        ),
        (
            "Verhalen van de dijk",
            "Stories of the dike",
            "Ouderen vertellen, scholieren schrijven het op.",
            "The elderly tell, pupils write it down.",
        ),
    ],
    [
        (
            "Samen koken",
            "Cooking together",
            "Buurtkeukens tegen eenzaamheid.",
            "Neighbourhood kitchens against loneliness.",
        ),
        (
            "Een maatje voor mantelzorgers",
            "A buddy for carers",
            "Vrijwilligers nemen een middag per week over.",
            "Volunteers take over one afternoon a week.",
        ),
        (
            "Tuinen bij het ziekenhuis",
            "Hospital gardens",
            "Groene plekken voor patienten en bezoekers.",
            "Green places for patients and visitors.",
        ),
    ],
    [
        (
            "Zwemmen voor iedereen",
            "Swimming for everyone",
            "Zwemles voor volwassenen die het nooit leerden.",
            "Swimming lessons for adults who never learnt.",
        ),
        (
            "Het buurtveld",
            "The neighbourhood pitch",
            "Een open sportveld in elke wijk.",
            "An open sports field in every district.",
        ),
        (
            "Fietsen naar school",
            "Cycling to school",
            "Veilige routes en fietslessen.",
            "Safe routes and cycling lessons.",
        ),
    ],
];

pub(crate) fn create_demo_projects(store: &Store) -> Result<(), StoreError> {
    let mut projects = Vec::new();
    for (t, (category, _, _)) in THEMES.iter().enumerate() {
        for (i, (title, title_en, summary, summary_en)) in DEMO[t].iter().enumerate() {
            let n = t * 3 + i + 1;
            projects.push(
                NewResource::new(
                    category,
                    Props::new()
                        .with("title", translated([("nl", *title), ("en", *title_en)]))
                        .with(
                            "summary",
                            translated([("nl", *summary), ("en", *summary_en)]),
                        )
                        .with("image", format!("images/project-{n}.svg")),
                )
                .named(&format!("project_{n}"))
                .published(true),
            );
        }
    }
    // One transaction: all twelve, or none when another node made them.
    done_or_taken(store.create_resources(projects))
}
