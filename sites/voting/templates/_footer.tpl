</main>
<footer class="foot"><p>Nederland / the Netherlands &middot; Bulwark</p></footer>
</body>
</html>
