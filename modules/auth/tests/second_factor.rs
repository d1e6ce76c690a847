//! The second factor on a real database, SQLite and PostgreSQL: enrolment in
//! two steps, codes that work once (also when two logons race), clocks a step
//! off, recovery codes, and who must use it by `[auth] require_second_factor`.

use crate::databases as common;

use bulwark_module_auth::accounts::{self, groups_of};
use bulwark_module_auth::second_factor::{
    self, confirm_enrolment_at, has_second_factor, recovery_codes_left, regenerate_recovery_codes,
    second_factor_required, start_enrolment, verify_second_factor_at,
};
use bulwark_module_auth::totp::{STEP_SECONDS, TotpKey};
use bulwark_module_auth::{
    AccountError, AuthSettings, GroupName, SecondFactorCheck, SecondFactorError,
};
use bulwark_store::{ResourceId, Store, StoreError};

use SecondFactorCheck::{Accepted, AcceptedRecoveryCode, Refused};

/// A moment in the middle of a step, so `NOW ± 30 s` are the steps either side.
const NOW: u64 = 1_800_000_015;

/// `name` in `group`, on a database with the module's tables (as a site that
/// enables it has).
fn user(s: &Store, name: &str, group: &str) -> ResourceId {
    bulwark_module_auth::migrate(s).unwrap();
    accounts::ensure_user_groups(s).unwrap();
    accounts::add_user(s, name, &GroupName::new(group), common::PASSWORD_HASH).unwrap()
}

/// Enrols `person` at [`NOW`]: the key its app holds and the recovery codes.
fn enrolled(s: &Store, person: ResourceId) -> (TotpKey, Vec<String>) {
    let pending = start_enrolment(s, person, "shop", "ann").unwrap();
    let key = TotpKey::from_base32(&pending.secret).unwrap();
    let codes = confirm_enrolment_at(s, person, &key.code_at(NOW), NOW).unwrap();
    (key, codes.codes().to_vec())
}

fn enrolment_takes_a_code_from_the_new_secret_and_then_codes_are_needed(s: &Store) {
    let ann = user(s, "ann", "editors");
    assert!(!has_second_factor(s, ann).unwrap());
    assert!(matches!(
        confirm_enrolment_at(s, ann, "123456", NOW),
        Err(SecondFactorError::NoPendingEnrolment)
    ));
    let pending = start_enrolment(s, ann, "shop", "ann").unwrap();
    assert_eq!(
        pending.uri,
        format!(
            "otpauth://totp/shop:ann?secret={}&issuer=shop",
            pending.secret
        )
    );
    let key = TotpKey::from_base32(&pending.secret).unwrap();
    // Pending is not enrolled: no code is asked for, none is accepted.
    assert!(!has_second_factor(s, ann).unwrap());
    assert_eq!(
        verify_second_factor_at(s, ann, &key.code_at(NOW), NOW).unwrap(),
        Refused
    );

    let wrong = TotpKey::random().code_at(NOW);
    assert!(matches!(
        confirm_enrolment_at(s, ann, &wrong, NOW),
        Err(SecondFactorError::WrongCode)
    ));
    assert!(!has_second_factor(s, ann).unwrap(), "still pending");
    let codes = confirm_enrolment_at(s, ann, &key.code_at(NOW), NOW).unwrap();
    assert_eq!(codes.codes().len(), second_factor::RECOVERY_CODES);
    assert!(has_second_factor(s, ann).unwrap());
    assert_eq!(recovery_codes_left(s, ann).unwrap(), 10);
    assert!(matches!(
        confirm_enrolment_at(s, ann, &key.code_at(NOW), NOW),
        Err(SecondFactorError::NoPendingEnrolment)
    ));

    // The confirming code was used; the next step's code works, once.
    assert_eq!(
        verify_second_factor_at(s, ann, &key.code_at(NOW), NOW).unwrap(),
        Refused
    );
    let later = NOW + STEP_SECONDS;
    let next = key.code_at(later);
    assert_eq!(
        verify_second_factor_at(s, ann, &next, later).unwrap(),
        Accepted
    );
    assert_eq!(
        verify_second_factor_at(s, ann, &next, later).unwrap(),
        Refused,
        "replay"
    );
    assert_eq!(
        verify_second_factor_at(s, ann, "000000", later + 60).unwrap(),
        Refused
    );
    // Another user's code is no code for ann.
    let bob = user(s, "bob", "members");
    let (bob_key, _) = enrolled(s, bob);
    let bob_code = bob_key.code_at(later + 60);
    assert_eq!(
        verify_second_factor_at(s, ann, &bob_code, later + 60).unwrap(),
        Refused
    );
}

fn a_clock_one_step_off_is_accepted_and_two_steps_off_is_not(s: &Store) {
    let ann = user(s, "ann", "members");
    let (key, _) = enrolled(s, ann);
    // An hour later, so the enrolment's step is long past.
    let now = NOW + 3600;
    let step = now / STEP_SECONDS;
    // (the step the app made the code for, when it is typed, the verdict), in order.
    let cases = [
        (step - 2, now, Refused),
        (step + 2, now, Refused),
        // The app is a step behind.
        (step - 1, now, Accepted),
        // Then a step ahead: accepted, and from then on the current step's
        // code is older than the last one used.
        (step + 1, now, Accepted),
        (step, now, Refused),
        (step + 2, now + STEP_SECONDS, Accepted),
    ];
    for (i, (code_step, at, verdict)) in cases.into_iter().enumerate() {
        let code = key.code_at_step(code_step);
        assert_eq!(
            verify_second_factor_at(s, ann, &code, at).unwrap(),
            verdict,
            "case {i}"
        );
    }
    // As the app shows it, with a space.
    let code = key.code_at_step(step + 4);
    let spaced = format!("{} {}", &code[..3], &code[3..]);
    assert_eq!(
        verify_second_factor_at(s, ann, &spaced, now + 4 * STEP_SECONDS).unwrap(),
        Accepted
    );
}

fn two_logons_with_the_same_code_at_once_let_one_in(s: &Store) {
    let ann = user(s, "ann", "members");
    let (key, codes) = enrolled(s, ann);
    let later = NOW + STEP_SECONDS;
    let code = key.code_at(later);
    let race = |code: &str, at: u64| {
        let start = std::sync::Barrier::new(6);
        let verdicts: Vec<SecondFactorCheck> = std::thread::scope(|scope| {
            let threads: Vec<_> = (0..6)
                .map(|_| {
                    scope.spawn(|| {
                        start.wait();
                        verify_second_factor_at(s, ann, code, at).unwrap()
                    })
                })
                .collect();
            threads.into_iter().map(|t| t.join().unwrap()).collect()
        });
        verdicts
            .into_iter()
            .filter(|v| *v != Refused)
            .collect::<Vec<_>>()
    };
    assert_eq!(race(&code, later), [Accepted]);
    assert_eq!(
        race(&codes[0], later),
        [AcceptedRecoveryCode { remaining: 9 }]
    );
}

fn recovery_codes_work_once_each_and_regenerating_replaces_them_all(s: &Store) {
    let ann = user(s, "ann", "members");
    let (_, codes) = enrolled(s, ann);
    assert_eq!(
        verify_second_factor_at(s, ann, &codes[0], NOW).unwrap(),
        AcceptedRecoveryCode { remaining: 9 }
    );
    assert_eq!(
        verify_second_factor_at(s, ann, &codes[0], NOW).unwrap(),
        Refused
    );
    // Typed without dashes, in capitals.
    let typed = codes[1].replace('-', "").to_uppercase();
    assert_eq!(
        verify_second_factor_at(s, ann, &typed, NOW).unwrap(),
        AcceptedRecoveryCode { remaining: 8 }
    );
    assert_eq!(
        verify_second_factor_at(s, ann, "nonsense", NOW).unwrap(),
        Refused
    );
    assert_eq!(recovery_codes_left(s, ann).unwrap(), 8);

    let fresh = regenerate_recovery_codes(s, ann).unwrap();
    assert_eq!(recovery_codes_left(s, ann).unwrap(), 10);
    assert_eq!(
        verify_second_factor_at(s, ann, &codes[2], NOW).unwrap(),
        Refused,
        "replaced"
    );
    assert_eq!(
        verify_second_factor_at(s, ann, &fresh.codes()[9], NOW).unwrap(),
        AcceptedRecoveryCode { remaining: 9 }
    );

    // Only their hashes are stored.
    let keys: Vec<String> = s
        .module_read(|sql| {
            Ok(sql
                .query(
                    "SELECT key FROM auth_second_factor WHERE person_id = $1 AND kind = 'recovery_code'",
                    &[ann.0.into()],
                )?
                .iter()
                .map(|r| r.text(0))
                .collect())
        })
        .unwrap();
    assert_eq!(keys.len(), 9);
    for code in fresh.codes() {
        let bare = code.replace('-', "");
        assert!(
            keys.iter().all(|k| k.len() == 64 && !k.contains(&bare)),
            "{code}"
        );
    }
}

fn disabling_removes_the_secret_and_the_recovery_codes(s: &Store) {
    let ann = user(s, "ann", "members");
    let (key, codes) = enrolled(s, ann);
    assert!(second_factor::disable(s, ann).unwrap());
    assert!(!has_second_factor(s, ann).unwrap());
    let later = NOW + STEP_SECONDS;
    assert_eq!(
        verify_second_factor_at(s, ann, &key.code_at(later), later).unwrap(),
        Refused
    );
    assert_eq!(
        verify_second_factor_at(s, ann, &codes[0], later).unwrap(),
        Refused
    );
    assert!(matches!(
        regenerate_recovery_codes(s, ann),
        Err(SecondFactorError::NotEnrolled)
    ));
    assert!(
        !second_factor::disable(s, ann).unwrap(),
        "nothing left to remove"
    );
}

fn a_new_enrolment_replaces_the_old_secret_only_once_confirmed(s: &Store) {
    let ann = user(s, "ann", "members");
    let (old, old_codes) = enrolled(s, ann);
    let pending = start_enrolment(s, ann, "shop", "ann").unwrap();
    let new = TotpKey::from_base32(&pending.secret).unwrap();
    // Until confirmed, the old secret is the one that counts.
    let t1 = NOW + STEP_SECONDS;
    assert_eq!(
        verify_second_factor_at(s, ann, &new.code_at(t1), t1).unwrap(),
        Refused
    );
    assert_eq!(
        verify_second_factor_at(s, ann, &old.code_at(t1), t1).unwrap(),
        Accepted
    );
    // A second start replaces the first pending secret.
    let again = start_enrolment(s, ann, "shop", "ann").unwrap();
    let t2 = t1 + STEP_SECONDS;
    assert!(matches!(
        confirm_enrolment_at(s, ann, &new.code_at(t2), t2),
        Err(SecondFactorError::WrongCode)
    ));
    let newest = TotpKey::from_base32(&again.secret).unwrap();
    let codes = confirm_enrolment_at(s, ann, &newest.code_at(t2), t2).unwrap();
    let t3 = t2 + STEP_SECONDS;
    assert_eq!(
        verify_second_factor_at(s, ann, &old.code_at(t3), t3).unwrap(),
        Refused
    );
    assert_eq!(
        verify_second_factor_at(s, ann, &old_codes[0], t3).unwrap(),
        Refused
    );
    assert_eq!(
        verify_second_factor_at(s, ann, &newest.code_at(t3), t3).unwrap(),
        Accepted
    );
    assert_eq!(
        verify_second_factor_at(s, ann, &codes.codes()[0], t3).unwrap(),
        AcceptedRecoveryCode { remaining: 9 }
    );
}

fn settings(groups: &[&str]) -> AuthSettings {
    let table: toml::Table = toml::from_str(&format!(
        "require_second_factor = [{}]",
        groups
            .iter()
            .map(|g| format!("{g:?}"))
            .collect::<Vec<_>>()
            .join(", ")
    ))
    .unwrap();
    AuthSettings::parse(Some(&table), "localhost", false).unwrap()
}

fn requiring_it_for_a_group_takes_in_the_groups_that_extend_it(s: &Store) {
    let people: Vec<(&str, ResourceId)> = ["members", "editors", "managers", "administrators"]
        .into_iter()
        .map(|group| (group, user(s, &format!("in_{group}"), group)))
        .collect();
    let required = |groups: &[&str]| -> Vec<&str> {
        let settings = settings(groups);
        people
            .iter()
            .filter(|(_, person)| second_factor_required(s, *person, &settings).unwrap())
            .map(|(group, _)| *group)
            .collect()
    };
    assert_eq!(required(&[]), Vec::<&str>::new());
    assert_eq!(
        required(&["editors"]),
        ["editors", "managers", "administrators"]
    );
    assert_eq!(required(&["administrators"]), ["administrators"]);
    assert_eq!(
        required(&["Managers", "members"]),
        ["members", "editors", "managers", "administrators"]
    );
    // Everyone counts in anonymous, the root.
    assert_eq!(required(&["anonymous"]).len(), 4);

    let manager = people[2].1;
    assert_eq!(
        groups_of(s, manager).unwrap(),
        ["managers", "editors", "members", "anonymous"].map(GroupName::new)
    );

    // A group that does not exist is an error, not a silent "no".
    let misspelt = settings(&["editor"]);
    assert!(matches!(
        second_factor_required(s, manager, &misspelt),
        Err(AccountError::UnknownGroup { .. })
    ));
    let err = misspelt.check_groups(s).unwrap_err();
    let text = err.to_string();
    assert!(matches!(err, StoreError::InvalidInput { .. }), "{err:?}");
    assert!(
        text.starts_with("auth.require_second_factor[0]: there is no user group \"editor\"")
            && text.contains("anonymous, members, editors, authors, managers, administrators"),
        "{text}"
    );
    settings(&["editors", "administrators"])
        .check_groups(s)
        .unwrap();
}

on_both_backends!(
    enrolment_takes_a_code_from_the_new_secret_and_then_codes_are_needed,
    a_clock_one_step_off_is_accepted_and_two_steps_off_is_not,
    two_logons_with_the_same_code_at_once_let_one_in,
    recovery_codes_work_once_each_and_regenerating_replaces_them_all,
    disabling_removes_the_secret_and_the_recovery_codes,
    a_new_enrolment_replaces_the_old_secret_only_once_confirmed,
    requiring_it_for_a_group_takes_in_the_groups_that_extend_it,
);
