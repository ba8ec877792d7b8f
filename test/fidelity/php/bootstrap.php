<?php
// Runs the platform's official PHP client's own tests (begateway/begateway-api-php) against a local
// Kopek, without Composer: its classes load from the client's checkout (BEGATEWAY_PHP_DIR), and its
// checkout address is Kopek's (KOPEK_CHECKOUT_URL). The shop comes from SHOP_ID and SHOP_SECRET_KEY,
// which the client's tests read themselves. See docs/testing.md.
$dir = rtrim(getenv('BEGATEWAY_PHP_DIR') ?: '', '/');
spl_autoload_register(function (string $class) use ($dir): void {
    foreach (['BeGateway\\' => '/lib/', 'Tests\\' => '/tests/'] as $prefix => $folder) {
        if (strncmp($class, $prefix, strlen($prefix)) === 0) {
            $file = $dir . $folder . str_replace('\\', '/', substr($class, strlen($prefix))) . '.php';
            if (is_file($file)) {
                require $file;
            }
            return;
        }
    }
});
\BeGateway\Settings::$checkoutBase = getenv('KOPEK_CHECKOUT_URL');
\BeGateway\Settings::$gatewayBase = getenv('KOPEK_CHECKOUT_URL');
\BeGateway\Settings::$apiBase = getenv('KOPEK_CHECKOUT_URL');
